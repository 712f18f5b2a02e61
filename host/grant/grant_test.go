package grant

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func fields(t *testing.T, src string) map[string]*yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]*yaml.Node{}
	if len(doc.Content) == 0 {
		return out
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = m.Content[i+1]
	}
	return out
}

func TestFromFrontMatter(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    Declared
		warning string
	}{
		{name: "defaults", src: "", want: Declared{Timeout: 60 * time.Second, Trust: "external"}},
		{name: "all keys", src: "fs_read: [a]\nfs_write: [b]\nnetwork: true\ntimeout: 5\ntrust: core",
			want: Declared{FSRead: []string{"a"}, FSWrite: []string{"b"}, Network: true, Timeout: 5 * time.Second, Trust: "core"}},
		{name: "scalar paths", src: "fs_read: /etc\nfs_write: ./out",
			want: Declared{FSRead: []string{"/etc"}, FSWrite: []string{"./out"}, Timeout: 60 * time.Second, Trust: "external"}},
		{name: "decimal timeout", src: "timeout: 0.5", want: Declared{Timeout: 500 * time.Millisecond, Trust: "external"}},
		{name: "duration timeout", src: "timeout: 1m30s", want: Declared{Timeout: 90 * time.Second, Trust: "external"}},
		{name: "string seconds", src: "timeout: '30'", want: Declared{Timeout: 30 * time.Second, Trust: "external"}},
		{name: "zero timeout", src: "timeout: 0", want: Declared{Timeout: 60 * time.Second, Trust: "external"}, warning: "not positive"},
		{name: "negative timeout", src: "timeout: -3", want: Declared{Timeout: 60 * time.Second, Trust: "external"}, warning: "not positive"},
		{name: "garbage timeout", src: "timeout: soon", want: Declared{Timeout: 60 * time.Second, Trust: "external"}, warning: "not a number of seconds"},
		{name: "string false", src: "network: \"false\"", want: Declared{Timeout: 60 * time.Second, Trust: "external"}},
		{name: "string no", src: "network: \"no\"", want: Declared{Timeout: 60 * time.Second, Trust: "external"}},
		{name: "string 0", src: "network: \"0\"", want: Declared{Timeout: 60 * time.Second, Trust: "external"}},
		{name: "string yes", src: "network: \"yes\"", want: Declared{Network: true, Timeout: 60 * time.Second, Trust: "external"}},
		{name: "bad network", src: "network: maybe", want: Declared{Timeout: 60 * time.Second, Trust: "external"}, warning: "network: \"maybe\""},
		{name: "unknown trust", src: "trust: bogus", want: Declared{Timeout: 60 * time.Second, Trust: "external"}, warning: "neither core nor external"},
		{name: "trust is case sensitive", src: "trust: Core", want: Declared{Timeout: 60 * time.Second, Trust: "external"}, warning: "neither core nor external"},
		{name: "odd path entries", src: "fs_read: [a, {b: c}, '', 3]", want: Declared{FSRead: []string{"a", "3"}, Timeout: 60 * time.Second, Trust: "external"}, warning: "not a path"},
		{name: "mapping paths", src: "fs_write: {a: b}", want: Declared{Timeout: 60 * time.Second, Trust: "external"}, warning: "expected a path or a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := FromFrontMatter(fields(t, tt.src))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			joined := strings.Join(warnings, "\n")
			if tt.warning == "" && joined != "" || !strings.Contains(joined, tt.warning) {
				t.Errorf("warnings = %q, want %q", warnings, tt.warning)
			}
		})
	}
}

// tree builds a directory layout for path tests and returns its resolved
// root (t.TempDir may itself live under a symlink).
func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"work/data", "work/out", "secret", "tmp", "tmpfoo"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"work/data/escape":   filepath.Join(root, "secret"),
		"work/data/inside":   "../out",
		"work/dangling":      filepath.Join(root, "secret", "new-file"),
		"work/relative-up":   "../secret",
		"link-to-work":       "work",
		"work/data/loop":     "loop",
		"work/chain-a":       "chain-b",
		"work/chain-b":       "data",
		"work/out/up-and-in": "../../work/data",
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestResolve(t *testing.T) {
	root := tree(t)
	env := Env{Cwd: filepath.Join(root, "work"), Home: filepath.Join(root, "secret")}
	tests := []struct {
		in, want, err string
	}{
		{in: ".", want: root + "/work"},
		{in: "data", want: root + "/work/data"},
		{in: "./data/../out", want: root + "/work/out"},
		{in: "~", want: root + "/secret"},
		{in: "~/keys", want: root + "/secret/keys"},
		{in: "~other/x", err: "~user paths are not supported"},
		{in: "data/escape", want: root + "/secret"},
		{in: "data/escape/id_rsa", want: root + "/secret/id_rsa"},
		{in: "data/inside", want: root + "/work/out"},
		{in: "dangling", want: root + "/secret/new-file"},
		{in: "relative-up/x", want: root + "/secret/x"},
		{in: root + "/link-to-work/data", want: root + "/work/data"},
		{in: "chain-a/new/deeper", want: root + "/work/data/new/deeper"},
		{in: "data/escape/../work", want: root + "/work"}, // .. after a symlink climbs from its target, not from data/
		{in: "not/yet/there", want: root + "/work/not/yet/there"},
		{in: "data/loop", err: "too many levels of symbolic links"},
		// A missing directory followed by .. must not clean away into a
		// symlink that is then never resolved.
		{in: "data/nope/../escape", err: "does not exist, so the .. after it cannot be resolved"},
		{in: "nope/../../secret", err: "cannot be resolved"},
		{in: "not/yet/../there", err: "cannot be resolved"},
		{in: "", err: "empty path"},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.in, env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Resolve(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestCompute(t *testing.T) {
	root := tree(t)
	env := Env{Cwd: filepath.Join(root, "work"), Home: filepath.Join(root, "secret")}
	ceiling := Ceiling{FSRead: []string{"."}, FSWrite: []string{"out", root + "/tmp"}, Network: true, Timeout: 30 * time.Second}
	tests := []struct {
		name      string
		declared  Declared
		ceiling   *Ceiling
		wantRead  []string
		wantWrite []string
		warnings  []string
	}{
		{name: "inside the ceiling", declared: Declared{FSRead: []string{"data", "./data", root + "/work"}},
			wantRead: []string{root + "/work/data", root + "/work"}},
		{name: "outside by absolute path", declared: Declared{FSRead: []string{"/etc", root + "/secret"}},
			warnings: []string{"fs_read /etc is outside the ceiling", "fs_read " + root + "/secret is outside"}},
		{name: "symlink inside points outside", declared: Declared{FSRead: []string{"data/escape"}},
			warnings: []string{"data/escape (resolves to " + root + "/secret) is outside"}},
		{name: "dangling symlink write", declared: Declared{FSWrite: []string{"dangling", "out/file"}},
			wantWrite: []string{root + "/work/out/file"}, warnings: []string{"fs_write dangling (resolves to " + root + "/secret/new-file)"}},
		{name: "tmpfoo is not under tmp", declared: Declared{FSWrite: []string{root + "/tmpfoo", root + "/tmp/x"}},
			wantWrite: []string{root + "/tmp/x"}, warnings: []string{"tmpfoo is outside"}},
		{name: "dot-dot traversal", declared: Declared{FSRead: []string{"data/../../secret"}},
			warnings: []string{"outside the ceiling"}},
		{name: "missing directory then .. into a symlink", declared: Declared{FSRead: []string{"data/x/../escape"}, FSWrite: []string{"out/nope/../../data/escape"}},
			warnings: []string{"fs_read \"data/x/../escape\"", "cannot be resolved; dropped", "fs_write \"out/nope/../../data/escape\""}},
		{name: "root ceiling admits everything", declared: Declared{FSRead: []string{"/etc", root + "/secret"}},
			ceiling: &Ceiling{FSRead: []string{"/"}}, wantRead: []string{"/etc", root + "/secret"}},
		{name: "tilde", declared: Declared{FSRead: []string{"~"}}, ceiling: &Ceiling{FSRead: []string{"~"}},
			wantRead: []string{root + "/secret"}},
		{name: "symlinked ceiling", declared: Declared{FSRead: []string{root + "/work/data"}},
			ceiling: &Ceiling{FSRead: []string{root + "/link-to-work"}}, wantRead: []string{root + "/work/data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ceiling
			if tt.ceiling != nil {
				c = *tt.ceiling
			}
			g, warnings := Compute("s", tt.declared, c, env)
			if !reflect.DeepEqual(g.FSRead, tt.wantRead) || !reflect.DeepEqual(g.FSWrite, tt.wantWrite) {
				t.Errorf("read=%q write=%q, want %q %q", g.FSRead, g.FSWrite, tt.wantRead, tt.wantWrite)
			}
			joined := strings.Join(warnings, "\n")
			for _, w := range tt.warnings {
				if !strings.Contains(joined, w) {
					t.Errorf("warnings lack %q:\n%s", w, joined)
				}
			}
			if len(tt.warnings) == 0 && joined != "" {
				t.Errorf("unexpected warnings: %s", joined)
			}
		})
	}
}

func TestComputeScalars(t *testing.T) {
	tests := []struct {
		declared Declared
		ceiling  Ceiling
		trusted  bool
		want     Grant
		warning  string
	}{
		{Declared{Network: true, Timeout: 120 * time.Second}, Ceiling{Network: true, Timeout: 30 * time.Second}, false,
			Grant{Network: true, Timeout: 30 * time.Second, Trust: "external"}, ""},
		{Declared{Network: true, Timeout: 5 * time.Second}, Ceiling{Network: false, Timeout: 30 * time.Second}, false,
			Grant{Timeout: 5 * time.Second, Trust: "external"}, ""},
		{Declared{Network: false, Timeout: 5 * time.Second}, Ceiling{Network: true, Timeout: 30 * time.Second}, false,
			Grant{Timeout: 5 * time.Second, Trust: "external"}, ""},
		{Declared{Trust: "core", Timeout: time.Second}, Ceiling{Timeout: time.Minute}, false,
			Grant{Timeout: time.Second, Trust: "external"}, "not listed in sandbox.trusted"},
		{Declared{Trust: "core", Timeout: time.Second, Dir: "/"}, Ceiling{Timeout: time.Minute, Trusted: []string{"/"}}, true,
			Grant{Timeout: time.Second, Trust: "core"}, ""},
		// Trust is bound to a directory: a name, or another directory, is
		// not enough.
		{Declared{Trust: "core", Timeout: time.Second, Dir: "/"}, Ceiling{Timeout: time.Minute, Trusted: []string{"s"}}, false,
			Grant{Timeout: time.Second, Trust: "external"}, "trust is bound to a directory"},
		{Declared{Trust: "core", Timeout: time.Second, Dir: "/"}, Ceiling{Timeout: time.Minute, Trusted: []string{"/usr"}}, false,
			Grant{Timeout: time.Second, Trust: "external"}, "not listed in sandbox.trusted"},
		{Declared{}, Ceiling{}, false, Grant{Timeout: DefaultTimeout, Trust: "external"}, ""},
	}
	for i, tt := range tests {
		g, warnings := Compute("s", tt.declared, tt.ceiling, Env{Cwd: "/"})
		if !reflect.DeepEqual(g, tt.want) {
			t.Errorf("%d: got %+v, want %+v", i, g, tt.want)
		}
		if g.Core() != tt.trusted {
			t.Errorf("%d: Core() = %v", i, g.Core())
		}
		if joined := strings.Join(warnings, "\n"); !strings.Contains(joined, tt.warning) || tt.warning == "" && joined != "" {
			t.Errorf("%d: warnings %q, want %q", i, warnings, tt.warning)
		}
	}
}

func TestGrantJSON(t *testing.T) {
	data, err := json.Marshal(Grant{Timeout: 1500 * time.Millisecond, Trust: "external"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"fs_read":[],"fs_write":[],"network":false,"timeout":1.5,"trust":"external"}`
	if string(data) != want {
		t.Fatalf("got %s, want %s", data, want)
	}
}

// A ceiling root reached through a symlink that a script could have made
// (it lies in the write ceiling) is ignored; through an operator's link
// outside every writable root it stays.
func TestCeilingSymlinkInsideWritableRoot(t *testing.T) {
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	for _, d := range []string{"data", "secret", "operator/real"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What a first run could do with write access to data/.
	if err := os.Symlink(filepath.Join(root, "secret"), filepath.Join(root, "data", "inputs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "operator", "real"), filepath.Join(root, "operator", "link")); err != nil {
		t.Fatal(err)
	}
	env := Env{Cwd: root}
	c := Ceiling{FSRead: []string{"data/inputs", "operator/link"}, FSWrite: []string{"data"}}
	d := Declared{FSRead: []string{"data/inputs", "operator/link", "secret"}}
	g, warnings := Compute("s", d, c, env)
	if want := []string{filepath.Join(root, "data"), filepath.Join(root, "operator", "real")}; !slices.Equal(g.FSRead, want[1:]) {
		t.Errorf("fs_read = %q, want only %q", g.FSRead, want[1:])
	}
	if !slices.ContainsFunc(warnings, func(w string) bool {
		return strings.Contains(w, "passes through the symlink "+filepath.Join(root, "data", "inputs"))
	}) {
		t.Errorf("no warning names the planted symlink: %q", warnings)
	}
	if got := ReadInsideWrite(Ceiling{FSRead: []string{"data/x", "operator"}, FSWrite: []string{"data"}}, env); !slices.Equal(got, []string{"data/x"}) {
		t.Errorf("ReadInsideWrite = %q, want [data/x]", got)
	}
}
