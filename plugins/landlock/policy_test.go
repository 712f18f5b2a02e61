package landlock

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeFS answers Stat for a fixed tree: paths ending in / are directories.
type fakeFS map[string]bool

type fakeInfo struct {
	name string
	dir  bool
}

func (f fakeInfo) Name() string { return f.name }
func (f fakeInfo) Size() int64  { return 0 }
func (f fakeInfo) Mode() fs.FileMode {
	return map[bool]fs.FileMode{true: fs.ModeDir | 0o755, false: 0o644}[f.dir]
}
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.dir }
func (f fakeInfo) Sys() any           { return nil }

func (f fakeFS) stat(p string) (os.FileInfo, error) {
	if dir, ok := f[p]; ok {
		return fakeInfo{filepath.Base(p), dir}, nil
	}
	return nil, fs.ErrNotExist
}

func (f fakeFS) glob(pattern string) ([]string, error) {
	var out []string
	for p := range f {
		if ok, _ := filepath.Match(pattern, p); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

func machine() fakeFS {
	return fakeFS{
		"/usr": true, "/bin": true, "/sbin": true, "/lib": true, "/lib64": true,
		"/etc/ld.so.cache": false, "/etc/ld.so.conf.d": true, "/etc/nsswitch.conf": false, "/etc/passwd": false,
		"/etc/group": false, "/etc/hosts": false, "/etc/resolv.conf": false, "/etc/localtime": false,
		"/etc/ssl": true, "/etc/ca-certificates": true, "/etc/python3.11": true, "/etc/python3": true,
		"/dev/null": false, "/dev/zero": false, "/dev/urandom": false, "/dev/random": false,
		"/proc/cpuinfo": false, "/proc/meminfo": false,
		"/home/u/skills/pdf": true, "/home/u/project/data": true, "/home/u/project/report.md": false,
		"/home/u/project/out": true, "/home/u/.pyenv": true, "/tmp/skillhost-run-1": true,
	}
}

func TestBuildGolden(t *testing.T) {
	tests := []struct {
		name string
		req  shared.Request
		env  Env
	}{
		{name: "empty-grant", req: shared.Request{SkillDir: "/home/u/skills/pdf"}, env: Env{ABI: 7, TempDir: "/tmp/skillhost-run-1"}},
		{name: "full-grant", req: shared.Request{
			SkillDir:  "/home/u/skills/pdf",
			Grant:     shared.Grant{FSRead: []string{"/home/u/project/data", "/home/u/project/report.md", "/home/u/missing"}, FSWrite: []string{"/home/u/project/out"}, Network: true},
			ExecPaths: []string{"/home/u/.pyenv"},
			Limits:    shared.Limits{OpenFiles: 64, FileSize: 1 << 20, Processes: 32, Memory: 1 << 30},
		}, env: Env{ABI: 7, TempDir: "/tmp/skillhost-run-1", Root: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := machine()
			tt.env.Stat, tt.env.Glob = m.stat, m.glob
			got, err := json.MarshalIndent(Build(tt.req, tt.env), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("..", "..", "testdata", "landlock", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(got)+"\n" != string(want) {
				t.Errorf("policy differs from %s (run with -update if the change is intended):\n%s", golden, got)
			}
		})
	}
}

func TestPolicyNeverGrantsSecrets(t *testing.T) {
	m := machine()
	m["/etc/shadow"], m["/etc"], m["/home/u"], m["/home/u/.ssh"] = false, true, true, true
	p := Build(shared.Request{SkillDir: "/home/u/skills/pdf"}, Env{ABI: 7, Stat: m.stat, Glob: m.glob})
	for _, path := range []string{"/etc/shadow", "/etc/ssh/ssh_host_rsa_key", "/home/u", "/home/u/.ssh/id_rsa", "/proc/1/environ", "/tmp/x"} {
		if p.Readable(path) {
			t.Errorf("%s is readable", path)
		}
	}
	for _, path := range []string{"/usr/bin/python3", "/etc/passwd", "/home/u/skills/pdf/scripts/x.py", "/dev/null"} {
		if !p.Readable(path) {
			t.Errorf("%s is not readable", path)
		}
	}
	if p.Writable("/home/u/skills/pdf/scripts/x.py") || !p.Writable("/dev/null") {
		t.Error("the skill directory must be read-only and /dev/null writable")
	}
}

func TestViolations(t *testing.T) {
	p := Policy{RODirs: []string{"/usr", "/skill"}, RWDirs: []string{"/work"}, Limits: shared.Limits{Processes: 10, FileSize: 100}}
	argv := []string{"/bin/bash", "/skill/scripts/run.sh"}
	tests := []struct {
		output string
		want   string // kind:target, or "" for none
	}{
		{"cat: /etc/shadow: Permission denied", "fs:/etc/shadow"},
		{"/skill/scripts/run.sh: line 3: /skill/scripts/out: Permission denied", "fs-write:/skill/scripts/out"},
		{"PermissionError: [Errno 13] Permission denied: '/home/u/.ssh/id_rsa'", "fs:/home/u/.ssh/id_rsa"},
		{"python3: error while loading shared libraries: libpython3.12.so: cannot open shared object file: Permission denied", "fs-read:libpython3.12.so"},
		{"bash: socket: Operation not permitted", "network:"},
		{"bash: /dev/tcp/127.0.0.1/80: Operation not permitted", "network:"},
		{"bash: line 1: kill: (4242) - Operation not permitted", "signal:4242"},
		{"bash: fork: retry: Resource temporarily unavailable", "limit:processes"},
		{"File size limit exceeded", "limit:file_size"},
		{"cat: /work/file: Permission denied", ""}, // writable, so not a sandbox denial
		{"everything is fine", ""},
	}
	for _, tt := range tests {
		got := ""
		if vs := Violations(tt.output, p, argv); len(vs) > 0 {
			got = vs[0].Kind + ":" + vs[0].Target
		}
		if got != tt.want {
			t.Errorf("Violations(%q) = %q, want %q", tt.output, got, tt.want)
		}
	}
	many := strings.Repeat("cat: /secret/a: Permission denied\ncat: /secret/b: Permission denied\n", 10)
	if n := len(Violations(many, p, argv)); n != 2 {
		t.Errorf("duplicates are reported once: got %d", n)
	}
}

func TestSuggestRoot(t *testing.T) {
	tests := map[string]string{
		"/home/u/.pyenv/shims/python3":            "/home/u/.pyenv",
		"/home/u/.nvm/versions/node/v20/bin/node": "/home/u/.nvm",
		"/opt/homebrew/bin/python3":               "/opt/homebrew/bin",
	}
	for in, want := range tests {
		if got := suggestRoot(in, "/home/u"); got != want {
			t.Errorf("suggestRoot(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestFeaturesProbe(t *testing.T) {
	tests := []struct {
		f      Features
		status shared.ProbeStatus
		reason string
	}{
		{Features{RawABI: 7, ABI: 7, Seccomp: true, Uid: 1000}, shared.Healthy, "Landlock ABI 7: fs, net, scopes, seccomp; processes: rlimit"},
		{Features{RawABI: 3, ABI: 3, Seccomp: true, Uid: 1000}, shared.Healthy, "Landlock ABI 3: fs, net, seccomp"},
		{Features{Missing: "Landlock is not available in this kernel", Seccomp: true}, shared.Unsupported, "Landlock is not available"},
		{Features{RawABI: 7, ABI: 7}, shared.Unsupported, "seccomp is not available"},
	}
	for _, tt := range tests {
		p := tt.f.Probe()
		if p.Status != tt.status || !strings.Contains(p.Reason, tt.reason) {
			t.Errorf("%+v: got %s %q", tt.f, p.Status, p.Reason)
		}
		if p.Details["landlock_abi"] == "" {
			t.Errorf("%+v: no ABI in the details", tt.f)
		}
	}
	if ne := (Features{RawABI: 3, ABI: 3, Seccomp: true, Uid: 0}).NotEnforced(); !strings.Contains(strings.Join(ne, ";"), "signal") || !strings.Contains(strings.Join(ne, ";"), "process limit") {
		t.Errorf("NotEnforced = %q", ne)
	}
}
