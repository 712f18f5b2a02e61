package denials

import (
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

type grant struct{ ro, rw []string }

func under(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

func (g grant) Readable(p string) bool { return under(p, g.ro) || under(p, g.rw) }
func (g grant) Writable(p string) bool { return under(p, g.rw) }

func TestViolations(t *testing.T) {
	g := grant{ro: []string{"/usr", "/skill"}, rw: []string{"/work"}}
	opts := Options{Limits: shared.Limits{Processes: 10, FileSize: 100}, Ignore: []string{"/bin/bash", "/skill/scripts/run.sh"}}
	tests := []struct {
		output string
		want   string // kind:target, or "" for none
	}{
		{"cat: /etc/shadow: Permission denied", "fs:/etc/shadow"},
		{"cat: /etc/shadow: No such file or directory", "fs:/etc/shadow"},
		{"FileNotFoundError: [Errno 2] No such file or directory: '/home/u/.ssh/id_rsa'", "fs:/home/u/.ssh/id_rsa"},
		// A write outside the grant is a write (issue 35): EROFS, and the
		// words tools use when they cannot create a file.
		{"touch: cannot touch '/home/u/notes.txt': Read-only file system", "fs-write:/home/u/notes.txt"},
		{"OSError: [Errno 30] Read-only file system: '/etc/x'", "fs-write:/etc/x"},
		{"/skill/scripts/run.sh: line 2: /opt/x: Read-only file system", "fs-write:/opt/x"},
		{"/skill/scripts/run.sh: 2: cannot create /opt/x: Directory nonexistent", "fs-write:/opt/x"},
		{"mkdir: cannot create directory '/opt/x': No such file or directory", "fs-write:/opt/x"},
		{"cp: cannot create regular file '/opt/x': Permission denied", "fs-write:/opt/x"},
		{"OSError: [Errno 30] Read-only file system: '/skill/scripts/out'", "fs-write:/skill/scripts/out"},
		{"/skill/scripts/run.sh: line 3: /skill/scripts/out: Permission denied", "fs-write:/skill/scripts/out"},
		{"PermissionError: [Errno 13] Permission denied: '/home/u/.ssh/id_rsa'", "fs:/home/u/.ssh/id_rsa"},
		{"python3: error while loading shared libraries: libpython3.12.so: cannot open shared object file: Permission denied", "fs-read:libpython3.12.so"},
		{"bash: socket: Operation not permitted", "network:"},
		{"bash: /dev/tcp/127.0.0.1/80: Operation not permitted", "network:"},
		{"bash: line 1: kill: (4242) - Operation not permitted", "signal:4242"},
		{"bash: fork: retry: Resource temporarily unavailable", "limit:processes"},
		{"File size limit exceeded", "limit:file_size"},
		{"cat: /work/file: Permission denied", ""},             // writable, so not a sandbox denial
		{"cat: /skill/missing: No such file or directory", ""}, // inside the grant: just missing
		{"everything is fine", ""},
	}
	for _, tt := range tests {
		got := ""
		if vs := Scan(tt.output, g, opts); len(vs) > 0 {
			got = vs[0].Kind + ":" + vs[0].Target
		}
		if got != tt.want {
			t.Errorf("Violations(%q) = %q, want %q", tt.output, got, tt.want)
		}
	}
	many := strings.Repeat("cat: /secret/a: Permission denied\ncat: /secret/b: Permission denied\n", 10)
	if n := len(Scan(many, g, opts)); n != 2 {
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
		if got := SuggestRoot(in, "/home/u"); got != want {
			t.Errorf("SuggestRoot(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestLauncher(t *testing.T) {
	tests := []struct {
		argv []string
		want int
	}{
		{[]string{"/usr/bin/python3", "/s/skill/scripts/x.py", "/home/u/secret"}, 2},
		{[]string{"/usr/bin/env", "-S", "python3 -u", "/s/skill/scripts/x.py", "/etc/shadow"}, 4},
		{[]string{"/usr/bin/bash", "-c", "x"}, 1},
		{nil, 0},
	}
	for _, tt := range tests {
		if got := Launcher(tt.argv, "/s/skill"); len(got) != tt.want {
			t.Errorf("Launcher(%q) = %q, want the first %d", tt.argv, got, tt.want)
		}
	}
}

// A relative path a tool failed on is reported by the absolute path it
// names in the command's working directory.
func TestRelativePaths(t *testing.T) {
	g := grant{ro: []string{"/usr", "/skill"}, rw: []string{"/work"}}
	opts := Options{Dir: "/home/u/project"}
	for line, want := range map[string]string{
		"FileNotFoundError: [Errno 2] No such file or directory: 'form.pdf'": "/home/u/project/form.pdf",
		"PermissionError: [Errno 13] Permission denied: 'data/in.csv'":       "/home/u/project/data/in.csv",
		"cat: notes.txt: No such file or directory":                          "/home/u/project/notes.txt",
		"sh: 1: cannot open ../outside.txt: No such file":                    "/home/u/outside.txt",
		"cat: /work/x: No such file or directory":                            "",
	} {
		got := ""
		for _, v := range Scan(line, g, opts) {
			if v.Kind == "fs" {
				got = v.Target
			}
		}
		if got != want {
			t.Errorf("%q: violation %q, want %q", line, got, want)
		}
	}
}
