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

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
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
		"/etc/ssl": true, "/etc/ssl/certs": true, "/etc/ssl/private": true, "/etc/ca-certificates": true, "/etc/python3.11": true, "/etc/python3": true,
		"/dev/null": false, "/dev/zero": false, "/dev/urandom": false, "/dev/random": false,
		"/proc/cpuinfo": false, "/proc/meminfo": false,
		"/home/u/skills/pdf": true, "/home/u/project/data": true, "/home/u/project/report.md": false,
		"/home/u/project/out": true, "/home/u/.pyenv": true, "/tmp/skillhost-run-1": true, "/tmp": true,
		"/home/u/project/out/.git/hooks": true, "/home/u/project/out/sub": true, "/home/u/project": true,
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
		// The run's filesystem view: a read grant beneath the write grant
		// adds nothing, a write grant beneath a read grant is bound over
		// it, and a protected path inside the write grant goes back to
		// read-only.
		{name: "view", req: shared.Request{
			SkillDir: "/home/u/skills/pdf",
			Dir:      "/home/u/project",
			Grant: shared.Grant{
				FSRead:    []string{"/home/u/project", "/home/u/project/out/sub"},
				FSWrite:   []string{"/home/u/project/out"},
				Protected: []string{"/home/u/project/out/.git/hooks", "/home/u/project/out/.bashrc"},
			},
			Limits: shared.Limits{Memory: 256 << 20},
		}, env: Env{ABI: 7, TempDir: confiner.ViewTmp, View: true}},
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
	for _, path := range []string{"/etc/shadow", "/etc/ssh/ssh_host_rsa_key", "/etc/ssl/private/ssl-cert-snakeoil.key", "/home/u", "/home/u/.ssh/id_rsa", "/proc/1/environ", "/tmp/x"} {
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

func TestFeaturesProbe(t *testing.T) {
	tests := []struct {
		f      Features
		status shared.ProbeStatus
		reason string
	}{
		{Features{RawABI: 7, ABI: 7, Seccomp: true, Uid: 1000, Namespaces: "pid, mount, user", ReadOnlyView: true}, shared.Healthy, "view + Landlock + seccomp; Landlock ABI 7: fs, net, scopes, seccomp; namespaces: pid, mount, user; processes: rlimit"},
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
