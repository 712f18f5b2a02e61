package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// isolate points every config location at empty places.
func isolate(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, EnvPrefix) {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func TestDefaults(t *testing.T) {
	isolate(t)
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != "" || !c.Sandbox.Enabled || c.Sandbox.Strategy != "auto" || c.Sandbox.Network.Allow.On ||
		!reflect.DeepEqual(c.Sandbox.FSRead, []string{"."}) || len(c.Sandbox.FSWrite) != 0 ||
		time.Duration(c.Sandbox.Timeout) != 60*time.Second || c.Sandbox.OutputLimit != 1<<20 ||
		c.Scripts.Workdir != "cwd" || !c.Plugins.AutoMTLS || c.Match.Strategy != "lexical" {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestLoadFile(t *testing.T) {
	isolate(t)
	p := write(t, `
skills:
  roots: [/a, /b]
scripts:
  workdir: skill
sandbox:
  enabled: false
  strategy: "null"
  fs_read: ["/srv"]
  fs_write: [/srv/out]
  network: true
  timeout: 1m30s
  output_limit: 64KiB
  env: [FOO, BAR=baz]
  limits: {processes: 10, memory: 1G}
plugins:
  sha256: {"null": "`+strings.Repeat("ab", 32)+`"}
match:
  threshold: 0.5
`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != p || c.Sandbox.Enabled || c.Sandbox.Strategy != "null" || !c.Sandbox.Network.Allow.On ||
		time.Duration(c.Sandbox.Timeout) != 90*time.Second || c.Sandbox.OutputLimit != 64<<10 ||
		c.Sandbox.Limits.Processes != 10 || c.Sandbox.Limits.Memory != 1<<30 || c.Sandbox.Limits.OpenFiles != 1024 ||
		!reflect.DeepEqual(c.Sandbox.Env, []string{"FOO", "BAR=baz"}) || c.Scripts.Workdir != "skill" ||
		*c.Match.Threshold != 0.5 || !reflect.DeepEqual(c.Skills.Roots, []string{"/a", "/b"}) {
		t.Fatalf("loaded: %+v", c)
	}
	ceil := c.Ceiling()
	if !reflect.DeepEqual(ceil.FSRead, []string{"/srv"}) || ceil.Timeout != 90*time.Second || !ceil.Network {
		t.Fatalf("ceiling: %+v", ceil)
	}
}

func TestLoadErrors(t *testing.T) {
	isolate(t)
	tests := []struct {
		name, content, want string
	}{
		{"unknown section", "sandboxx: {}\n", "line 1: unknown key sandboxx"},
		{"unknown key", "sandbox:\n  networkk: true\n", "line 2: unknown key sandbox.networkk"},
		{"unknown nested key", "sandbox:\n  limits:\n    cpus: 2\n", "unknown key sandbox.limits.cpus"},
		{"yaml null strategy", "sandbox:\n  strategy: null\n", `write strategy: "null" (quoted)`},
		{"bad strategy", "sandbox:\n  strategy: Has Space\n", "not auto or a plugin name"},
		{"bad timeout", "sandbox:\n  timeout: soon\n", "not a number of seconds"},
		{"zero timeout", "sandbox:\n  timeout: 0\n", "not positive"},
		{"bad bool", "sandbox:\n  network: maybe\n", `line 2: sandbox.network: "maybe" is not true, false or a list of host patterns`},
		{"bad host pattern", "sandbox:\n  network:\n    allow: [pypi.org, '*.com']\n", `line 3: sandbox.network.allow: host pattern "*.com"`},
		{"bad size", "sandbox:\n  output_limit: lots\n", "not a size"},
		{"bad workdir", "scripts:\n  workdir: home\n", "scripts.workdir"},
		{"bad pin", "plugins:\n  sha256: {\"null\": abc}\n", "plugins.sha256.null"},
		{"null pin key", "plugins:\n  sha256: {null: abc}\n", `write "null": (quoted)`},
		{"bad threshold", "match:\n  threshold: 2\n", "match.threshold"},
		{"bad semantic", "match:\n  semantic: -1\n", "match.semantic: -1 is outside [0, 20]"},
		{"bad code", "match:\n  code: 0.5\n", "match.code: 0.5 is outside [1, 20]"},
		{"bad everyday", "match:\n  everyday: -1\n", "match.everyday: -1 is outside [0, 20]"},
		{"NaN everyday", "match:\n  everyday: .nan\n", "match.everyday: NaN is outside [0, 20]"},
		{"bad breadth", "match:\n  breadth: 21\n", "match.breadth: 21 is outside [0, 20]"},
		{"NaN breadth", "match:\n  breadth: .nan\n", "match.breadth: NaN is outside [0, 20]"},
		{"negative examples", "match:\n  examples: -1\n", "match.examples: -1 is outside [0, 50]"},
		{"too many examples", "match:\n  examples: 51\n", "match.examples: 51 is outside [0, 50]"},
		{"fractional examples", "match:\n  examples: 2.5\n", "line 2: match.examples: 2.5 is not a whole number"},
		{"fractional limit", "match:\n  limit: 1.5\n", "line 2: match.limit: 1.5 is not a whole number"},
		{"fraction through an alias", "match:\n  threshold: &x 0.5\n  limit: *x\n", "line 3: match.limit: 0.5 is not a whole number"},
		{"infinite limit", "match:\n  limit: .inf\n", "match.limit: .inf is not a whole number"},
		{"NaN semantic", "match:\n  semantic: .nan\n", "match.semantic: NaN is outside [0, 20]"},
		{"NaN threshold", "match:\n  threshold: .nan\n", "match.threshold: NaN is outside [0, 1]"},
		{"NaN code", "match:\n  code: .nan\n", "match.code: NaN is outside [1, 20]"},
		{"embedding without url", "match:\n  strategy: embedding\n", "match.embedding.url"},
		{"not a mapping", "- a\n- b\n", "must be a mapping"},
		{"bad yaml", "sandbox: [\n", "invalid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write(t, tt.content)
			_, err := Load(p)
			var ce *Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a config error containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

func TestConfigLocation(t *testing.T) {
	isolate(t)
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("an explicit missing file must be an error")
	}
	p := write(t, "sandbox:\n  network: true\n")
	t.Setenv(EnvConfig, p)
	c, err := Load("")
	if err != nil || !c.Sandbox.Network.Allow.On || c.Source != p {
		t.Fatalf("SKILLHOST_CONFIG: %v %+v", err, c)
	}
	os.Unsetenv(EnvConfig)
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	def := filepath.Join(xdg, "skillhost", "config.yaml")
	os.MkdirAll(filepath.Dir(def), 0o755)
	os.WriteFile(def, []byte("sandbox:\n  timeout: 5\n"), 0o644)
	c, err = Load("")
	if err != nil || c.Source != def || time.Duration(c.Sandbox.Timeout) != 5*time.Second {
		t.Fatalf("XDG default: %v %+v", err, c)
	}
}

func TestEnvOverrides(t *testing.T) {
	isolate(t)
	p := write(t, "sandbox:\n  network: true\n  fs_write: [/x]\n")
	t.Setenv("SKILLHOST_SANDBOX__NETWORK", "false")
	t.Setenv("SKILLHOST_SANDBOX__ENABLED", "true")
	t.Setenv("SKILLHOST_SANDBOX__TIMEOUT", "2.5")
	t.Setenv("SKILLHOST_SANDBOX__FS_READ", "/a, /b")
	t.Setenv("SKILLHOST_SANDBOX__FS_WRITE", "[/c]")
	t.Setenv("SKILLHOST_SANDBOX__LIMITS__PROCESSES", "7")
	t.Setenv("SKILLHOST_SANDBOX__STRATEGY", "null")
	t.Setenv("SKILLHOST_PLUGINS__SHA256", "{landlock: "+strings.Repeat("0", 64)+"}")
	t.Setenv("SKILLHOST_MATCH__THRESHOLD", "0.25")
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Network.Allow.On || !c.Sandbox.Enabled || time.Duration(c.Sandbox.Timeout) != 2500*time.Millisecond ||
		!reflect.DeepEqual(c.Sandbox.FSRead, []string{"/a", "/b"}) || !reflect.DeepEqual(c.Sandbox.FSWrite, []string{"/c"}) ||
		c.Sandbox.Limits.Processes != 7 || c.Sandbox.Strategy != "null" || c.Plugins.SHA256["landlock"] == "" ||
		*c.Match.Threshold != 0.25 {
		t.Fatalf("overrides: %+v", c.Sandbox)
	}
}

func TestEnvOverrideErrors(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"SKILLHOST_SANDBOX__NETWORKK", "true", "environment variable SKILLHOST_SANDBOX__NETWORKK: unknown key sandbox.networkk"},
		{"SKILLHOST_NOPE__X", "1", "unknown key nope"},
		{"SKILLHOST_SANDBOX__NETWORK", "maybe", `sandbox.network: "maybe" is not true, false or a list of host patterns`},
		{"SKILLHOST_SANDBOX__TIMEOUT", "soon", "sandbox.timeout"},
		{"SKILLHOST_MATCH__EXAMPLES", "2.5", "match.examples: 2.5 is not a whole number"},
		{"SKILLHOST_SANDBOX__LIMITS__PROCESSES", "7.5", "sandbox.limits.processes: 7.5 is not a whole number"},
		{"SKILLHOST_SANDBOX__LIMITS__PROCESSES", "many", "sandbox.limits.processes"},
		{"SKILLHOST_SANDBOX__NETWORK__X", "1", "unknown key sandbox.network.x"},
		{"SKILLHOST_SANDBOX__TIMEOUT__X", "1", "sandbox.timeout is not a section"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			t.Setenv(tt.name, tt.value)
			_, err := Load("")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseByteSize(t *testing.T) {
	tests := map[string]ByteSize{"1048576": 1 << 20, "64KiB": 64 << 10, "1MiB": 1 << 20, "1M": 1 << 20, "10MB": 10_000_000, "2g": 2 << 30, "0.5KiB": 512, "3b": 3}
	for in, want := range tests {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1TB"} {
		if _, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", bad)
		}
	}
}

func TestWritePins(t *testing.T) {
	isolate(t)
	p := write(t, "# my settings\nsandbox:\n  network: true # keep me\nplugins:\n  sha256:\n    old: "+strings.Repeat("1", 64)+"\n")
	sum := strings.Repeat("a", 64)
	if err := WritePins(p, map[string]string{"null": sum}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	for _, want := range []string{"# my settings", "# keep me", "old: " + strings.Repeat("1", 64), `"null": ` + sum} {
		if !strings.Contains(string(data), want) {
			t.Errorf("rewritten config lacks %q:\n%s", want, data)
		}
	}
	c, err := Load(p)
	if err != nil || c.Plugins.SHA256["null"] != sum || !c.Sandbox.Network.Allow.On {
		t.Fatalf("reload: %v %+v", err, c.Plugins)
	}
	fresh := filepath.Join(t.TempDir(), "new", "config.yaml")
	if err := WritePins(fresh, map[string]string{"landlock": sum}); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(fresh); err != nil || c.Plugins.SHA256["landlock"] != sum {
		t.Fatalf("fresh file: %v", err)
	}
}

// A whole number written as a float is a whole number, in a file and in
// the environment.
func TestWholeNumberAsFloat(t *testing.T) {
	isolate(t)
	c, err := Load(write(t, "match:\n  limit: 2.0\n  examples: !!float 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Match.Limit != 2 || c.Match.Examples == nil || *c.Match.Examples != 3 {
		t.Fatalf("limit %d, examples %v; want 2 and 3", c.Match.Limit, c.Match.Examples)
	}
	t.Setenv("SKILLHOST_MATCH__EXAMPLES", "1e1")
	if c, err = Load(write(t, "")); err != nil || *c.Match.Examples != 10 {
		t.Fatalf("SKILLHOST_MATCH__EXAMPLES=1e1: %v, %v", err, c)
	}
}

// A default configuration file that cannot be read (another user's HOME,
// inherited) is a warning, not a failure; one named explicitly still fails.
func TestUnreadableDefaultConfig(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv(EnvConfig, "")
	if err := os.MkdirAll(filepath.Join(dir, "skillhost"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "skillhost", "config.yaml")
	if err := os.WriteFile(path, []byte("sandbox: {}\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load("")
	if err != nil || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], path) {
		t.Fatalf("Load: %v, warnings %q", err, cfg.Warnings)
	}
	if _, err := Load(path); err == nil {
		t.Error("an unreadable file named explicitly was accepted")
	}
}

func TestNetworkSection(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	os.WriteFile(p, []byte(`sandbox:
  network:
    allow: ["api.anthropic.com", "*.github.com:443"]
    deny: ["gist.github.com"]
    reasons: {"gist.github.com": "gists are blocked; use the repository"}
    deny_addresses: ["10.0.0.0/8"]
  credentials:
    - host: api.anthropic.com
      header: x-api-key
      from_env: ANTHROPIC_API_KEY
      placeholder_env: ANTHROPIC_API_KEY
skills:
  grants:
    some-skill: {network: ["pypi.org", "files.pythonhosted.org"]}
    other: {network: false}
`), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	ce := c.Ceiling()
	if !ce.Network || !slices.Equal(ce.Hosts, []string{"api.anthropic.com", "*.github.com:443"}) || !slices.Equal(ce.Deny, []string{"gist.github.com"}) ||
		ce.Reasons["gist.github.com"] != "gists are blocked; use the repository" || !slices.Equal(ce.DenyAddresses, []string{"10.0.0.0/8"}) ||
		!slices.Equal(ce.Keyed, []string{"api.anthropic.com"}) {
		t.Errorf("ceiling %+v", ce)
	}
	op := c.Skills.Grants["some-skill"].Operator()
	if op.Network == nil || !*op.Network || !slices.Equal(op.Hosts, []string{"pypi.org", "files.pythonhosted.org"}) {
		t.Errorf("operator grant %+v", op)
	}
	if op := c.Skills.Grants["other"].Operator(); op.Network == nil || *op.Network || op.Hosts != nil {
		t.Errorf("network: false grant %+v", op)
	}
	t.Setenv("SKILLHOST_SANDBOX__NETWORK__ALLOW", "pypi.org,*.python.org")
	if c, err = Load(p); err != nil || !slices.Equal(c.Ceiling().Hosts, []string{"pypi.org", "*.python.org"}) {
		t.Errorf("override: %v %+v", err, c.Ceiling())
	}
	for _, bad := range []struct{ yaml, want string }{
		{"sandbox:\n  network:\n    deny: ['a b']\n", "sandbox.network.deny[0]"},
		{"sandbox:\n  network:\n    deny_addresses: [10.0.0.0/40]\n", "sandbox.network.deny_addresses[0]"},
		{"sandbox:\n  network:\n    fallback: sometimes\n", "sandbox.network.fallback"},
		{"sandbox:\n  credentials: [{host: '*.x.com', header: a, from_env: K}]\n", "sandbox.credentials[0].host"},
		{"sandbox:\n  credentials: [{host: x.com, header: 'a b', from_env: K}]\n", "sandbox.credentials[0].header"},
		{"sandbox:\n  credentials: [{host: x.com, header: a, from_env: 'K-1'}]\n", "sandbox.credentials[0].from_env"},
	} {
		os.WriteFile(p, []byte(bad.yaml), 0o644)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.yaml, err, bad.want)
		}
	}
}

// The YAML blocks of docs/network.md work as written: each configuration
// block loads, and the SKILL.md example declares what it says.
func TestNetworkDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/network.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	if len(blocks) != 3 {
		t.Fatalf("%d YAML blocks in docs/network.md, want 3", len(blocks))
	}
	t.Setenv("ANTHROPIC_API_KEY", "x")
	for i, b := range blocks {
		b = b[:strings.Index(b, "```")]
		if strings.HasPrefix(b, "network:") {
			continue // the SKILL.md line, checked by the grant package's own tests
		}
		p := filepath.Join(t.TempDir(), "config.yaml")
		os.WriteFile(p, []byte(b), 0o644)
		c, err := Load(p)
		if err != nil {
			t.Errorf("block %d: %v\n%s", i, err, b)
			continue
		}
		if i == 1 && (len(c.Ceiling().Hosts) != 2 || c.Skills.Grants["some-skill"].Network == nil) {
			t.Errorf("block %d loaded as %+v", i, c.Ceiling())
		}
		if i == 2 && (len(c.Sandbox.Credentials) != 1 || c.Sandbox.Credentials[0].FromEnv != "ANTHROPIC_API_KEY") {
			t.Errorf("block %d loaded as %+v", i, c.Sandbox.Credentials)
		}
	}
}

// mcp.workspace_roots: the home directory by default (null too), a list
// from the file or the environment, an empty list allows no client root,
// and a relative entry is refused.
func TestMCPWorkspaceRoots(t *testing.T) {
	tests := []struct {
		name, file, env string
		want            []string
		err             string
	}{
		{"default", "", "", []string{"~"}, ""},
		{"null", "mcp:\n  workspace_roots: null\n", "", []string{"~"}, ""},
		{"file", "mcp:\n  workspace_roots: [~/src, /srv/work, $PROJECTS]\n", "", []string{"~/src", "/srv/work", "$PROJECTS"}, ""},
		{"empty", "mcp:\n  workspace_roots: []\n", "", []string{}, ""},
		{"quoted ~", "mcp:\n  workspace_roots: [\"~\", ~/src]\n", "", []string{"~", "~/src"}, ""},
		{"bare ~", "mcp:\n  workspace_roots: [~]\n", "", nil, `line 2: mcp.workspace_roots: a bare ~ or null is YAML's "no value"; write "~" (quoted)`},
		{"bare ~ among others", "mcp:\n  workspace_roots:\n    - /a\n    - ~\n", "", nil, `line 4: mcp.workspace_roots: a bare ~`},
		{"empty entry", "mcp:\n  workspace_roots: [\"\"]\n", "", nil, `mcp.workspace_roots: entry 1 is empty`},
		{"environment", "mcp:\n  workspace_roots: [/a]\n", "~/src, /b", []string{"~/src", "/b"}, ""},
		{"relative", "mcp:\n  workspace_roots: [/a, src]\n", "", nil, `line 2: mcp.workspace_roots: entry 2, "src", is not an absolute path`},
		{"relative from the environment", "", "src", nil, `mcp.workspace_roots: entry 1, "src", is not an absolute path`},
		{"unknown key", "mcp:\n  workspace_root: [/a]\n", "", nil, "unknown key mcp.workspace_root (known: workspace_roots)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			path := ""
			if tt.file != "" {
				path = write(t, tt.file)
			}
			if tt.env != "" {
				t.Setenv("SKILLHOST_MCP__WORKSPACE_ROOTS", tt.env)
			}
			c, err := Load(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.MCP.WorkspaceRoots, tt.want) {
				t.Errorf("workspace_roots %#v, want %#v", c.MCP.WorkspaceRoots, tt.want)
			}
		})
	}
	if d := Default(); !reflect.DeepEqual(d.MCP.WorkspaceRoots, []string{"~"}) {
		t.Errorf("Default: %v", d.MCP.WorkspaceRoots)
	}
}
