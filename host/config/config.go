// Package config loads skillhost's configuration: built-in defaults, then a
// YAML file, then SKILLHOST_<SECTION>__<KEY> environment overrides. Every
// bad value and every unknown key is an error naming it and where it came
// from.
package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/grant"
)

// Config is the whole configuration. The zero value is not useful; start
// from Default or Load.
type Config struct {
	Skills  Skills  `yaml:"skills"`
	Scripts Scripts `yaml:"scripts"`
	Sandbox Sandbox `yaml:"sandbox"`
	Plugins Plugins `yaml:"plugins"`
	Match   Match   `yaml:"match"`
	MCP     MCP     `yaml:"mcp"`

	// Source is the file the configuration was read from, or "" when only
	// defaults (and environment overrides) apply.
	Source string `yaml:"-"`

	// Deprecations are warnings about keys that still work but moved.
	Deprecations []string `yaml:"-"`
	// Warnings are problems loading met and went past: a default
	// configuration file that cannot be read is one.
	Warnings []string `yaml:"-"`

	// root is the file's YAML, kept to name lines in validation errors.
	root *yaml.Node
}

// Skills configures discovery.
type Skills struct {
	// Roots are scanned in order; the first skill with a name wins. Empty
	// means ~/.prompts/skills, then ~/.agents/skills and ./.agents/skills
	// when they exist.
	Roots []string `yaml:"roots"`
	// Grants are the operator's grants, by skill name, added to what each
	// skill declares (and clamped to the sandbox ceiling, except the
	// workspace).
	Grants map[string]SkillGrant `yaml:"grants"`
}

// SkillGrant is what the operator grants one skill.
type SkillGrant struct {
	FSRead  []string `yaml:"fs_read"`
	FSWrite []string `yaml:"fs_write"`
	// Network, when set, replaces the skill's own network: value: true,
	// false or host patterns (each clamped to the ceiling).
	Network *Hosts `yaml:"network"`
	// Timeout, when set, replaces the skill's own timeout: value.
	Timeout Duration `yaml:"timeout"`
	// Workspace grants the host's working directory: none (default), read
	// or read-write.
	Workspace string `yaml:"workspace"`
	// Interpreter, an absolute path (or ~/...), runs the skill's scripts
	// instead of the interpreter their shebang or extension names, when
	// it is of the same language: a python for Python scripts.
	Interpreter string `yaml:"interpreter"`
}

// Operator returns the grant as the grant package takes it; the workspace
// mode was checked by Validate.
func (g SkillGrant) Operator() grant.Operator {
	ws, _ := grant.ParseWorkspace(g.Workspace)
	op := grant.Operator{FSRead: g.FSRead, FSWrite: g.FSWrite, Timeout: time.Duration(g.Timeout), Workspace: ws}
	if g.Network != nil {
		on := g.Network.On
		op.Network, op.Hosts = &on, g.Network.List
	}
	return op
}

// Scripts configures how tools run.
type Scripts struct {
	// Workdir is "cwd" (the host's working directory, the default) or
	// "skill" (the skill's directory).
	Workdir string `yaml:"workdir"`
	// RequireExec keeps the reference rule: only files with an execute
	// bit are tools, others are skipped with a warning. Off by default: a
	// file with a known interpreter extension or a shebang is a tool.
	RequireExec bool `yaml:"require_exec"`
}

// Working directories for Scripts.Workdir.
const (
	WorkdirCwd   = "cwd"
	WorkdirSkill = "skill"
)

// Sandbox is the ceiling every grant is clamped to, plus how scripts are
// confined and bounded.
type Sandbox struct {
	// Enabled routes runs through a sandbox plugin (default true). When
	// false, scripts run in-process with the same time, output and
	// environment bounds but no confinement.
	Enabled bool `yaml:"enabled"`
	// Strategy is "auto" (the platform's plugin) or a plugin name. A YAML
	// null is refused; write "null" for the null plugin.
	Strategy Strategy `yaml:"strategy"`
	// FSRead, FSWrite, Network and Timeout are the ceiling.
	FSRead  []string       `yaml:"fs_read"`
	FSWrite []string       `yaml:"fs_write"`
	Network NetworkCeiling `yaml:"network"`
	Timeout Duration       `yaml:"timeout"`
	// Credentials are secrets the egress proxy injects for their hosts.
	Credentials []Credential `yaml:"credentials"`
	// Trusted lists the directories of the skills whose trust: core is
	// honoured.
	Trusted []string `yaml:"trusted"`
	// Writes is how a confined run writes its grants: "staged" (default:
	// the run changes a copy-on-write view, and the host applies what it
	// changed afterwards under the protection policy) or "direct" (the run
	// writes the real trees; named in each result's not_enforced).
	Writes string `yaml:"writes"`
	// Protected adds to the paths no run's change is applied to
	// (changeset.Defaults): a name protected at any depth, a relative
	// path of several components, or an absolute path with all it holds.
	Protected []string `yaml:"protected"`
	// Unprotected takes from them: a default name is dropped, an absolute
	// path (a skill root, a tree inside a write grant) exempted.
	Unprotected []string `yaml:"unprotected"`
	// OutputLimit caps a script's merged output (default 1 MiB).
	OutputLimit ByteSize `yaml:"output_limit"`
	// Env adds to the variables scripts receive: NAME passes the host's
	// value through, NAME=value sets one.
	Env []string `yaml:"env"`
	// KillGrace is the time between SIGTERM and SIGKILL at a timeout.
	KillGrace Duration `yaml:"kill_grace"`
	// Limits bound a confined script's resources.
	Limits Limits `yaml:"limits"`
	// Interpreters are extra paths a confined script may read and execute
	// (pyenv, nvm, Homebrew trees), never write. The entry "auto" (the
	// default, also written as the scalar interpreters: auto) resolves each
	// tool's interpreter, shims included, to its real installation and
	// grants that tree.
	Interpreters List `yaml:"interpreters"`
}

// Values of sandbox.writes.
const (
	WritesStaged = "staged"
	WritesDirect = "direct"
)

// Limits bound the resources of a confined script. Zero means unlimited.
type Limits struct {
	OpenFiles int      `yaml:"open_files"`
	FileSize  ByteSize `yaml:"file_size"`
	Processes int      `yaml:"processes"`
	Memory    ByteSize `yaml:"memory"`
}

// Plugins configures sandbox plugin discovery and launch.
type Plugins struct {
	// Dirs are searched for skillhost-sandbox-<name> binaries. Empty means
	// the directory of the skillhost executable, then
	// $XDG_DATA_HOME/skillhost/plugins.
	Dirs []string `yaml:"dirs"`
	// SHA256 pins plugin binaries by name; a mismatch refuses to launch.
	SHA256 map[string]string `yaml:"sha256"`
	// AutoMTLS authenticates host and plugin to each other over their
	// socket (default true).
	AutoMTLS bool `yaml:"auto_mtls"`
	// StartTimeout bounds a plugin's start-up handshake.
	StartTimeout Duration `yaml:"start_timeout"`
	// Config holds each plugin's own settings by plugin name, passed to it
	// unread (see PluginConfig).
	Config map[string]PluginConfig `yaml:"config"`
}

// Match configures skill matching.
type Match struct {
	// Strategy is "lexical" (default), "embedding" or "hybrid".
	Strategy string `yaml:"strategy"`
	// Threshold is the minimum score in [0, 1]; nil means the strategy's
	// default.
	Threshold *float64 `yaml:"threshold"`
	// Limit caps the number of matches; 0 means no cap.
	Limit int `yaml:"limit"`
	// Semantic is the strength of the lexical matcher's semantic factor
	// (its word vectors); nil means the default, 4.1, and 0 turns it off.
	Semantic *float64 `yaml:"semantic"`
	// Code is the factor by which the lexical matcher multiplies the
	// evidence for a message that pastes code, markup or a formula; nil
	// means the default, 3.4, and 1 turns it off.
	Code *float64 `yaml:"code"`
	// Everyday is the strength of the lexical matcher's everyday-question
	// factor; nil means the default, 1.8, and 0 turns it off.
	Everyday *float64 `yaml:"everyday"`
	// Breadth is the strength of the lexical matcher's breadth factor,
	// which scales down a skill that matches many messages written for
	// other skills; nil means the default, and 0 turns it off.
	Breadth *float64 `yaml:"breadth"`
	// Examples is how many published skills lend each skill the requests
	// their users wrote; nil means the default, 5, and 0 turns it off.
	Examples  *int      `yaml:"examples"`
	Embedding Embedding `yaml:"embedding"`
}

// MCP configures `skillhost mcp`.
type MCP struct {
	// WorkspaceRoots are the directories an MCP client's root must be or
	// lie in to become a call's workspace (~, $VAR and ${VAR} expanded;
	// absolute otherwise). Default: the home directory. Whatever they
	// say, a root is never /, /etc, /usr, /var, the home directory, one
	// of its hidden directories (~/.ssh, ~/.config) or inside a protected
	// name such as .git (see mcpserver.RootPolicy.Check).
	WorkspaceRoots []string `yaml:"workspace_roots"`
}

// DefaultWorkspaceRoots is mcp.workspace_roots when it is not set: the
// home directory.
var DefaultWorkspaceRoots = []string{"~"}

// Embedding configures an OpenAI-compatible /v1/embeddings endpoint.
type Embedding struct {
	URL   string `yaml:"url"`
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable holding the API key; the
	// key itself never appears in the configuration.
	APIKeyEnv string   `yaml:"api_key_env"`
	Timeout   Duration `yaml:"timeout"`
	// CacheDir holds description vectors; empty means
	// $XDG_CACHE_HOME/skillhost/embeddings.
	CacheDir  string `yaml:"cache_dir"`
	BatchSize int    `yaml:"batch_size"`
}

// InterpretersAuto is the sandbox.interpreters entry that turns on
// automatic interpreter resolution.
const InterpretersAuto = "auto"

// Match strategies.
const (
	MatchLexical   = "lexical"
	MatchEmbedding = "embedding"
	MatchHybrid    = "hybrid"
)

// Default returns the built-in configuration.
func Default() *Config {
	return &Config{
		Scripts: Scripts{Workdir: WorkdirCwd},
		Sandbox: Sandbox{
			Enabled:      true,
			Strategy:     "auto",
			FSRead:       []string{"."},
			FSWrite:      []string{},
			Timeout:      Duration(grant.DefaultTimeout),
			Interpreters: List{InterpretersAuto},
			OutputLimit:  1 << 20,
			Writes:       WritesStaged,
			KillGrace:    Duration(2 * time.Second),
			Limits: Limits{
				OpenFiles: 1024,
				FileSize:  256 << 20,
				Processes: 256,
				Memory:    2 << 30,
			},
		},
		Plugins: Plugins{AutoMTLS: true, StartTimeout: Duration(10 * time.Second)},
		Match: Match{
			Strategy:  MatchLexical,
			Embedding: Embedding{Timeout: Duration(30 * time.Second), BatchSize: 64},
		},
		MCP: MCP{WorkspaceRoots: append([]string(nil), DefaultWorkspaceRoots...)},
	}
}

// Ceiling returns the sandbox section as a grant ceiling.
func (c *Config) Ceiling() grant.Ceiling {
	n := c.Sandbox.Network
	g := grant.Ceiling{
		FSRead:        c.Sandbox.FSRead,
		FSWrite:       c.Sandbox.FSWrite,
		Network:       n.Allow.On,
		Hosts:         n.Allow.List,
		Deny:          n.Deny,
		Reasons:       n.Reasons,
		DenyAddresses: n.DenyAddresses,
		Timeout:       time.Duration(c.Sandbox.Timeout),
		Trusted:       c.Sandbox.Trusted,
	}
	for _, cr := range c.Sandbox.Credentials {
		g.Keyed = append(g.Keyed, cr.Host)
	}
	return g
}
