package shared

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// ContractVersion is the version of the Executor contract this package
// implements. It changes only with a breaking change to the wire protocol.
const ContractVersion = 1

// Executor is a confinement strategy. Implementations must be safe for
// concurrent use: the host sends many Execute calls to one plugin process.
type Executor interface {
	// Info describes the backend. It must be cheap and never fail for a
	// working binary.
	Info(ctx context.Context) (Info, error)
	// Probe reports whether the backend can confine commands on this
	// machine right now, and why not.
	Probe(ctx context.Context) (Probe, error)
	// Execute runs req.Argv under req.Grant, passes its output to emit in
	// arrival order, and returns how it ended. An error means the command
	// could not run at all (refused, or failed to start); a command that ran
	// and failed is a Result. emit returning an error (the caller went
	// away) should stop the command.
	Execute(ctx context.Context, req Request, emit func([]byte) error) (Result, error)
}

// Explainer is implemented by backends that can show, without running
// anything, how they would confine a request, for review (skillhost
// profile). It is optional.
type Explainer interface {
	Explain(ctx context.Context, req Request) (Explanation, error)
}

// Explanation is a backend's account of how it would confine a request.
type Explanation struct {
	// Format names Text's language: "sbpl", "json" or "text".
	Format string
	Text   string
	// Argv is the command line that would run the request's argv.
	Argv []string
	// Readable lists the absolute paths the command may read and execute,
	// a directory standing for its tree, when the backend can say; nil
	// means it does not.
	Readable []string
}

// Trust levels of a Grant.
const (
	TrustCore     = "core"
	TrustExternal = "external"
)

// Grant is what a command may do. Paths are absolute and already resolved
// through symlinks by the host.
type Grant struct {
	FSRead  []string
	FSWrite []string
	Network bool
	Timeout time.Duration
	Trust   string
	// Protected are paths inside FSWrite that stay read-only (version
	// control hooks and config, shell start-up files, SSH and editor
	// settings, skill roots): code written there would run outside any
	// sandbox later. Each exists; a backend that builds a filesystem view
	// binds them read-only over the writable tree. Missing ones the host
	// checks after the run (see ProtectedNames).
	Protected []string
	// Egress, when not nil (and Network set), narrows the network to
	// named hosts reached through the backend's egress proxy: a backend
	// that cannot enforce it says so (Enforcement.Egress false) and the
	// host refuses the run.
	Egress *Egress
}

// ByName reports whether the grant's network is by name: Network set and
// narrowed by Egress.
func (g Grant) ByName() bool { return g.Network && g.Egress != nil }

// Egress is a grant's network by name: the hosts a command may reach,
// through a proxy the backend runs, and what that proxy adds. Patterns are
// "host", "*.domain" (subdomains only), either with ":port", and IP
// literals (IPv6 in brackets) that match only themselves.
type Egress struct {
	// Allow are the patterns a connection's host and port must match.
	Allow []string
	// Deny are patterns that win over Allow.
	Deny []string
	// Reasons maps a Deny or Allow pattern to the reason given to the
	// command when a connection is refused for it.
	Reasons map[string]string
	// DenyAddresses are address ranges (CIDR) an allowed name may not
	// resolve to, besides the ones always refused (loopback, link-local,
	// private cloud metadata endpoints, the host's own addresses...).
	DenyAddresses []string
	// Declared and Ceiling are the skill's and the operator's patterns,
	// quoted in the generic reason of a refusal.
	Declared, Ceiling []string
	// Credentials are secrets the proxy puts into requests to their host:
	// the command sees only the placeholder.
	Credentials []Credential
}

// Credential is a secret the egress proxy injects: in requests to Host
// (exact name), the header Header gets Prefix+Value wherever the command
// sent the placeholder (or nothing). Value never reaches the command.
type Credential struct {
	Host        string
	Header      string
	Prefix      string
	Value       string
	Placeholder string
	// PlaceholderEnv names the command's environment variable that holds
	// Placeholder.
	PlaceholderEnv string
}

// Limits bound a command's resources; zero means unlimited.
type Limits struct {
	OpenFiles int64 `json:"open_files"`
	FileSize  int64 `json:"file_size"`
	Processes int64 `json:"processes"`
	Memory    int64 `json:"memory"`
}

// Request is one command to run.
type Request struct {
	// RunID identifies the run in logs and denial messages.
	RunID string
	// Argv is the command; Argv[0] is an absolute path.
	Argv []string
	// Dir is the working directory.
	Dir string
	// Env is the complete environment, already scrubbed by the host.
	Env []string
	// Grant is the effective grant.
	Grant Grant
	// SkillDir is the skill's directory; backends make it readable.
	SkillDir string
	// OutputLimit caps the merged output in bytes.
	OutputLimit int64
	// KillGrace is the time between SIGTERM and SIGKILL at the deadline.
	KillGrace time.Duration
	// Limits bound resources, where the backend can.
	Limits Limits
	// ExecPaths are extra read-and-execute paths (interpreter trees).
	ExecPaths []string
	// BestEffort asks the backend to run even if it cannot enforce
	// everything, listing what it did not enforce in Result.NotEnforced.
	//
	// Deprecated: whether a backend runs without full confinement is one
	// of its own settings (see Configurable and Probe.BestEffort); the
	// host leaves this false. Backends keep honouring it for older hosts.
	BestEffort bool

	// Skill, Command and Mounts describe the run without host paths, for
	// a backend that runs commands elsewhere; the host fills them only
	// when Info.Remote is set (docs/contract.md §11).
	Skill   Skill
	Command Command
	Mounts  []Mount
	// FileLimit caps the bytes of files a remote backend returns in
	// Result.Files; 0 means none.
	FileLimit int64

	// Stage, when set, is a directory of the host, empty and owned by the
	// backend's user, where the run's writes go instead of Grant.FSWrite's
	// trees: the backend shows each write grant FSWrite[i] to the command
	// as a copy-on-write view of the real directory whose changes land in
	// StageUpper(Stage, i) in the layout of an overlayfs upper layer (a
	// deleted path is a 0/0 character device, a directory that replaced
	// one is marked opaque with the xattr user.overlay.opaque or
	// trusted.overlay.opaque set to "y"), with StageWork(Stage, i) as
	// scratch space on the same file system. The real trees must not
	// change during the run; the host applies the changes afterwards,
	// under its own policy. A backend that does not claim
	// Enforcement.StagedWrites never gets a Stage; one that claims it and
	// cannot stage this run refuses it.
	Stage string
}

// StageUpper is where the changes to Request.Grant.FSWrite[i] are staged.
func StageUpper(stage string, i int) string {
	return filepath.Join(stage, strconv.Itoa(i), "upper")
}

// StageDiscarded is where a backend keeps what a run wrote outside every
// write grant and would lose (its private /tmp), by absolute path beneath.
func StageDiscarded(stage string) string { return filepath.Join(stage, "discarded") }

// StageWork is the scratch directory beside StageUpper(stage, i).
func StageWork(stage string, i int) string {
	return filepath.Join(stage, strconv.Itoa(i), "work")
}

// File is a file a remote command wrote under a writable mount, returned
// so the host can write it back.
type File struct {
	// Path is the logical path the command wrote ("/workspace/out.csv"),
	// under one of the request's writable mounts.
	Path string
	// Mode holds the permission bits; the host keeps only 0755 or 0644.
	Mode uint32
	Data []byte
}

// Skill identifies a skill's files by the digest of their canonical tar
// (see package shared/skilltar), which a remote backend packs from
// Request.SkillDir, checks against Digest, and may cache by it.
type Skill struct {
	Name string
	// Digest is "sha256:" and 64 lowercase hex digits.
	Digest string
	// Size is the canonical tar's length in bytes.
	Size int64
}

// Command is the request's argv relative to the skill.
type Command struct {
	// Interpreter is the interpreter's base name ("python3", "bash"), empty
	// when the script runs directly.
	Interpreter string
	// Script is the script's slash-separated path inside the skill
	// ("scripts/fetch.py").
	Script string
	// Args are the tool's arguments.
	Args []string
}

// Mount roles.
const (
	MountSkill     = "skill"     // the skill's files, read-only, at /skill
	MountWorkspace = "workspace" // the working directory, when granted
	MountPath      = "path"      // any other granted path
)

// Mount is one granted path in a remote backend's terms. A backend that
// cannot provide a mount refuses the request, naming it, rather than run
// with less.
type Mount struct {
	Role string
	// Logical is where the command expects the mount: "/skill",
	// "/workspace", or HostPath itself for MountPath.
	Logical  string
	HostPath string
	Writable bool
}

// Violation is an access the backend saw denied.
type Violation struct {
	// Kind is "fs" (outside the grant), "fs-write" (a write denied),
	// "protected" (a staged change the host refused), "discarded" (a write
	// outside every grant that went to the run's private /tmp), "unseen"
	// (the host's, after a failed run: an argument names a path outside
	// the grant, which the sandbox kept from the script),
	// "network", "signal", "ptrace", "limit", "file" (a remote backend's
	// returned file the host refused to write back) or a backend-specific
	// word.
	Kind string `json:"kind"`
	// Target is the path or address concerned, if known.
	Target string `json:"target,omitempty"`
	// Detail explains, for a human.
	Detail string `json:"detail,omitempty"`
	// Host, Port and Reason describe a refused network connection
	// (kind "network" from an egress proxy): the name asked for and why
	// it was refused, in words the model can act on.
	Host   string `json:"host,omitempty"`
	Port   int    `json:"port,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Path and Change describe a change of a staged run that the host
	// refused to apply (kind "protected", made by the host, never sent
	// by a backend): the path and "created", "modified" or "deleted".
	Path   string `json:"path,omitempty"`
	Change string `json:"change,omitempty"`
}

// Result is how a command ended.
type Result struct {
	// ExitCode is the exit status, or -1 when killed by a signal.
	ExitCode int
	// Signal names the killing signal ("SIGKILL"), if any.
	Signal    string
	TimedOut  bool
	Truncated bool
	Duration  time.Duration
	// Violations the backend observed.
	Violations []Violation
	// NotEnforced lists grant parts the backend could not enforce (best
	// effort only).
	NotEnforced []string
	// Files are what a remote backend's command wrote under the writable
	// mounts, up to Request.FileLimit bytes; FilesTruncated says more were
	// left out. The host writes them back and keeps only their paths.
	Files          []File
	FilesTruncated bool
	// Worker names what ran the command, for a remote backend (a fleet
	// worker's identity); empty for a local run.
	Worker string
}

// Enforcement says which parts of a grant a backend enforces.
type Enforcement struct {
	FSRead           bool `json:"fs_read"`
	FSWrite          bool `json:"fs_write"`
	Network          bool `json:"network"`
	Timeout          bool `json:"timeout"`
	ResourceLimits   bool `json:"resource_limits"`
	ProcessIsolation bool `json:"process_isolation"`
	// Egress: the backend enforces Grant.Egress (named hosts through its
	// proxy); without it a grant that has one is refused.
	Egress bool `json:"egress"`
	// StagedWrites: the backend honours Request.Stage, leaving a run's
	// writes in the stage instead of the grant's trees (see Request.Stage).
	StagedWrites bool `json:"staged_writes,omitempty"`
}

// Info describes a backend.
type Info struct {
	// Name is the backend's name, the <name> of skillhost-sandbox-<name>.
	Name string `json:"name"`
	// Version is the backend's semantic version.
	Version string `json:"version"`
	// ContractVersions lists the contract versions the backend speaks.
	ContractVersions []int `json:"contract_versions"`
	// Platform is GOOS/GOARCH of the binary.
	Platform string `json:"platform"`
	// Enforces says what the backend can enforce.
	Enforces Enforcement `json:"enforces"`
	// Remote says the backend runs commands elsewhere, so it needs
	// Request.Skill, Command and Mounts rather than host paths alone.
	Remote bool `json:"remote,omitempty"`
	// Isolation says which of the host's namespaces the backend's runs do
	// not share. The zero value, every namespace shared, is the safe
	// declaration: the escape suite then counts every effect a run has,
	// even one that stays inside a namespace of its own, as an escape.
	Isolation Isolation `json:"isolation,omitzero"`
}

// Isolation is a backend's declaration of the Linux namespaces its runs
// get (namespaces(7)), each a promise kept for every run it names: a
// backend that cannot create one for a run refuses the run, or declares
// it shared.
type Isolation struct {
	// Network: the run's own network stack (interfaces, loopback, ports,
	// abstract Unix sockets, netlink).
	Network Namespace `json:"network,omitempty"`
	// IPC: the run's own System V IPC objects and POSIX message queues.
	IPC Namespace `json:"ipc,omitempty"`
	// PID: the run's own process ids; the host's processes, including the
	// backend's, are out of its sight and reach.
	PID Namespace `json:"pid,omitempty"`
	// Mount: the run's own mount table.
	Mount Namespace `json:"mount,omitempty"`
	// User: the run's own user and group ids and capabilities.
	User Namespace `json:"user,omitempty"`
}

// Namespace says when a backend's runs get a namespace of their own.
type Namespace int

// Namespace declarations.
const (
	// Shared: runs share the host's namespace (the zero value).
	Shared Namespace = iota
	// Private: every run has a namespace of its own.
	Private
	// PrivateUnlessNetwork: a run has a namespace of its own unless its
	// grant opens the whole network (Grant.Network without Grant.Egress),
	// when it shares the host's. A network namespace that stays empty but
	// for a loopback and, for network by name, the route to an egress
	// proxy is declared so.
	PrivateUnlessNetwork
)

// For reports whether a run with grant g gets a namespace of its own.
func (n Namespace) For(g Grant) bool {
	switch n {
	case Private:
		return true
	case PrivateUnlessNetwork:
		return !g.Network || g.Egress != nil
	}
	return false
}

// String names the declaration as the JSON form does.
func (n Namespace) String() string {
	switch n {
	case Shared:
		return "shared"
	case Private:
		return "private"
	case PrivateUnlessNetwork:
		return "private_unless_network"
	}
	return "Namespace(" + strconv.Itoa(int(n)) + ")"
}

// MarshalText renders the declaration by name ("private").
func (n Namespace) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText reads a declaration by name.
func (n *Namespace) UnmarshalText(b []byte) error {
	for _, c := range []Namespace{Shared, Private, PrivateUnlessNetwork} {
		if string(b) == c.String() {
			*n = c
			return nil
		}
	}
	return fmt.Errorf("namespace declaration %q: want shared, private or private_unless_network", b)
}

// ProbeStatus is a backend's health on this machine.
type ProbeStatus int

// Probe statuses.
const (
	// Healthy: the backend can enforce what Info claims.
	Healthy ProbeStatus = iota + 1
	// Unsupported: this machine lacks what the backend needs.
	Unsupported
	// Unhealthy: the backend should work here but currently does not.
	Unhealthy
)

// MarshalText renders the status by name ("healthy").
func (s ProbeStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s ProbeStatus) String() string {
	switch s {
	case Healthy:
		return "healthy"
	case Unsupported:
		return "unsupported"
	case Unhealthy:
		return "unhealthy"
	}
	return "unknown"
}

// Probe is the result of Executor.Probe.
type Probe struct {
	Status ProbeStatus `json:"status"`
	// Reason is one line for humans, e.g. "Landlock ABI 7".
	Reason string `json:"reason"`
	// Details are facts for `skillhost doctor`, e.g. {"landlock_abi": "7"}.
	Details map[string]string `json:"details,omitempty"`
	// BestEffort says the backend's settings let it run commands although
	// Status is not Healthy, listing in each Result.NotEnforced what it
	// could not enforce; the host then sends it commands anyway.
	BestEffort bool `json:"best_effort,omitempty"`
}
