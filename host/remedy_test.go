package host

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// remedyHost opens a host in a fresh project directory, with HOME a
// directory of its own and a ceiling of the project and data for reads
// and data for writes. Files lists the files to create first.
func remedyHost(t *testing.T, files ...string) (h *Host, project, data, other, home string) {
	t.Helper()
	noUserConfig(t)
	dirs := make([]string, 4)
	for i := range dirs {
		dirs[i], _ = filepath.EvalSymlinks(t.TempDir())
	}
	project, data, other, home = dirs[0], dirs[1], dirs[2], dirs[3]
	t.Setenv("HOME", home)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("sandbox:\n  fs_read: [\".\", \""+data+"\"]\n  fs_write: [\""+data+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f = strings.NewReplacer("PROJECT", project, "DATA", data, "OTHER", other, "HOME", home).Replace(f)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(project)
	h, err := Open(Options{ConfigPath: cfg, SkillRoots: []string{"../examples/skills"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, project, data, other, home
}

type remedyCase struct {
	write bool
	path  string   // PROJECT, DATA, OTHER and HOME are replaced
	want  []string // each must be in the advice
	not   []string // none may be
}

func checkRemedies(t *testing.T, h *Host, project, data, other, home string, cases []remedyCase) {
	t.Helper()
	r := strings.NewReplacer("PROJECT", project, "DATA", data, "OTHER", other, "HOME", home)
	for _, tt := range cases {
		path := r.Replace(tt.path)
		got := h.remedy("pdf", tt.write, path)
		for _, w := range tt.want {
			if w = r.Replace(w); !strings.Contains(got, w) {
				t.Errorf("remedy(write %v, %s) = %q, want it to say %q", tt.write, path, got, w)
			}
		}
		for _, n := range tt.not {
			if n = r.Replace(n); strings.Contains(got, n) {
				t.Errorf("remedy(write %v, %s) = %q, must not say %q", tt.write, path, got, n)
			}
		}
		if strings.Contains(got, "secret") && strings.Contains(got, "skills.grants") {
			t.Errorf("remedy(%s) suggests granting a secret: %q", path, got)
		}
		noBroadGrant(t, path, got, home)
	}
}

var suggestedRe = regexp.MustCompile(`(?:\.fs_(?:read|write): \[|add )"([^"]+)"`)

// noBroadGrant fails when advice suggests granting /, a system tree, a
// system directory's root or a home directory itself.
func noBroadGrant(t *testing.T, path, advice, home string) {
	t.Helper()
	for _, m := range suggestedRe.FindAllStringSubmatch(advice, -1) {
		g := m[1]
		switch {
		case g == "/", g == home, g == "/home", g == "/root", filepath.Dir(g) == "/home",
			g == "/bin", g == "/sbin", g == "/boot", g == "/var", filepath.Dir(g) == "/" && strings.HasPrefix(g, "/lib"),
			shared.UnderAny(g, []string{"/etc", "/usr", "/dev", "/proc", "/sys"}):
			t.Errorf("remedy(%s) suggests granting %s: %q", path, g, advice)
		}
	}
}

// A denial's advice is the least change that grants the path: the
// workspace, the operator's grant, then the ceiling; never a secret.
func TestRemedy(t *testing.T) {
	h, project, data, other, home := remedyHost(t, "PROJECT/form.pdf", "DATA/in.csv", "OTHER/in.csv")
	checkRemedies(t, h, project, data, other, home, []remedyCase{
		{false, "PROJECT/form.pdf", []string{"--workspace read ", "skills.grants.pdf.workspace: read"}, nil},
		{true, "PROJECT/out/x.txt", []string{"--workspace read-write"}, nil},
		{false, "DATA/in.csv", []string{`skills.grants.pdf.fs_read: ["DATA"]`}, []string{"ceiling"}},
		{false, "OTHER/in.csv", []string{`skills.grants.pdf.fs_read: ["OTHER"]`, `add "OTHER" to sandbox.fs_read`}, nil},
		{false, "/etc/shadow", []string{"looks like a secret"}, nil},
		{false, "/home/u/.ssh/config", []string{"looks like a secret"}, nil},
	})
}

// A denied write is answered with a write grant, never a read grant
// (issue 35); so is a path that does not exist, which no read needs.
func TestRemedyWriteNeedsWrite(t *testing.T) {
	h, project, data, other, home := remedyHost(t, "DATA/in.csv", "OTHER/in.csv")
	checkRemedies(t, h, project, data, other, home, []remedyCase{
		{true, "DATA/out.csv", []string{`skills.grants.pdf.fs_write: ["DATA"]`}, []string{"fs_read", "ceiling"}},
		{true, "OTHER/in.csv", []string{`skills.grants.pdf.fs_write: ["OTHER"]`, `add "OTHER" to sandbox.fs_write`}, []string{"fs_read"}},
		{true, "/opt/x", []string{`skills.grants.pdf.fs_write: ["/opt"]`, `add "/opt" to sandbox.fs_write`}, []string{"fs_read"}},
		{true, "/srv/archive/out/x.csv", []string{`fs_write: ["/srv/archive/out"]`}, []string{"fs_read"}},
		// Denied, direction unknown, and missing here: only creating it
		// can have been the need.
		{false, "OTHER/new/out.csv", []string{"does not exist here", `skills.grants.pdf.fs_write: ["OTHER/new"]`}, []string{"fs_read"}},
		{false, "PROJECT/report.txt", []string{"does not exist here", "--workspace read-write"}, nil},
		{false, "OTHER/in.csv", []string{`fs_read: ["OTHER"]`}, []string{"fs_write"}},
	})
}

// Never /, a system tree, a system directory's root or a home directory:
// the narrowest directory that does, or why none can (issue 35).
func TestRemedyNeverBroad(t *testing.T) {
	h, project, data, other, home := remedyHost(t, "HOME/notes.txt", "HOME/proj/in.txt")
	checkRemedies(t, h, project, data, other, home, []remedyCase{
		{true, "/etc/x", []string{"in /etc, a system tree", "never suggests"}, []string{"skills.grants", "fs_read"}},
		{false, "/etc/hostname.conf", []string{"in /etc, a system tree"}, []string{"skills.grants"}},
		{true, "/usr/local/lib/x", []string{"in /usr, a system tree"}, []string{"skills.grants"}},
		{false, "/dev/sda", []string{"in /dev, a system tree"}, []string{"skills.grants"}},
		{false, "/proc/1/environ", []string{"in /proc, a system tree"}, []string{"skills.grants"}},
		// A pid of the run's own PID namespace need not exist here: no
		// claim that only creating it can help, nor a file to use instead.
		{false, "/proc/999999999/stat", []string{"outside the grant; it is in /proc, a system tree the kernel fills", "has to do without it"},
			[]string{"does not exist here", "skills.grants", "project directory"}},
		{true, "/sys/kernel/x", []string{"in /sys, a system tree"}, []string{"skills.grants"}},
		{true, "/x", []string{"lies directly in /", "the root of the file system"}, []string{"skills.grants"}},
		{true, "/var/x", []string{"lies directly in /var", "a system directory"}, []string{"skills.grants"}},
		{true, "/var/lib/app/x", []string{`fs_write: ["/var/lib/app"]`}, nil},
		{true, "/bin/x", []string{"lies directly in /bin"}, []string{"skills.grants"}},
		{true, "/lib64/x", []string{"lies directly in /lib64"}, []string{"skills.grants"}},
		{true, "/boot/x", []string{"lies directly in /boot"}, []string{"skills.grants"}},
		{true, "HOME/notes.txt", []string{"lies directly in HOME", "a home directory"}, []string{"skills.grants"}},
		{true, "/home/someone/x", []string{"lies directly in /home/someone", "a home directory"}, []string{"skills.grants"}},
		{true, "/root/x", []string{"lies directly in /root"}, []string{"skills.grants"}},
		// An existing file directly in a home directory can be read on
		// its own; a subdirectory is narrow enough.
		{false, "HOME/notes.txt", []string{`fs_read: ["HOME/notes.txt"]`}, nil},
		{false, "HOME/proj/in.txt", []string{`fs_read: ["HOME/proj"]`}, nil},
		{true, "HOME/proj/out.txt", []string{`fs_write: ["HOME/proj"]`}, nil},
	})
}

// The workspace is never suggested where it would be refused: the working
// directory is the home directory.
func TestRemedyNoWorkspaceInHome(t *testing.T) {
	h, project, data, other, home := remedyHost(t, "HOME/notes.txt")
	t.Chdir(home)
	h2, err := Open(Options{ConfigPath: h.configPath, SkillRoots: []string{filepath.Join(project, "..")}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	checkRemedies(t, h2, project, data, other, home, []remedyCase{
		{false, "HOME/notes.txt", []string{`fs_read: ["HOME/notes.txt"]`}, []string{"--workspace"}},
		{true, "HOME/notes.txt", []string{"a home directory"}, []string{"--workspace", "skills.grants"}},
	})
}

// A file in the working directory named like a secret gets the workspace
// remedy when the user named it; a real credential never does, and
// outside the working directory the name alone still stops it (issue 35).
func TestRemedySecretsInWorkspace(t *testing.T) {
	files := []string{"PROJECT/secrets.txt", "PROJECT/api_token.txt", "PROJECT/credentials.json", "PROJECT/private/notes.md",
		"PROJECT/.env", "PROJECT/.env.local", "PROJECT/.env.example", "PROJECT/server.pem", "PROJECT/tls.key", "PROJECT/id_ed25519",
		"PROJECT/.ssh/config", "PROJECT/.netrc", "OTHER/secrets.txt"}
	h, project, data, other, home := remedyHost(t, files...)
	ws, secret := []string{"--workspace read"}, []string{"looks like a secret"}
	checkRemedies(t, h, project, data, other, home, []remedyCase{
		{false, "PROJECT/secrets.txt", ws, secret},
		{false, "PROJECT/api_token.txt", ws, secret},
		{false, "PROJECT/credentials.json", ws, secret},
		{false, "PROJECT/private/notes.md", ws, secret},
		{false, "PROJECT/.env.example", ws, secret},
		{true, "PROJECT/token.txt", []string{"--workspace read-write"}, secret},
		{false, "PROJECT/.env", secret, ws},
		{false, "PROJECT/.env.local", secret, ws},
		{false, "PROJECT/server.pem", secret, ws},
		{false, "PROJECT/tls.key", secret, ws},
		{false, "PROJECT/id_ed25519", secret, ws},
		{false, "PROJECT/.ssh/config", secret, ws},
		{false, "PROJECT/.netrc", secret, ws},
		{false, "OTHER/secrets.txt", secret, []string{"skills.grants"}},
		{false, "HOME/.ssh/id_rsa", secret, []string{"skills.grants"}},
	})

	// With the run's arguments known, only what the user named gets it.
	vs := []shared.Violation{
		{Kind: "fs", Target: filepath.Join(project, "secrets.txt")},
		{Kind: "fs", Target: filepath.Join(project, "api_token.txt")},
		{Kind: "fs", Target: filepath.Join(project, "private/notes.md")},
		{Kind: "fs", Target: filepath.Join(project, ".env")},
		{Kind: "fs", Target: filepath.Join(project, "form.pdf")},
	}
	h.remedies("pdf", vs, "/usr/bin/python3", "/skills/pdf/scripts/x.py", "secrets.txt", "--in=private", ".env", "-v")
	for i, want := range []string{"--workspace read", "looks like a secret", "--workspace read", "looks like a secret", "--workspace read-write"} {
		if !strings.Contains(vs[i].Detail, want) {
			t.Errorf("remedies: %s: %q, want it to say %q", vs[i].Target, vs[i].Detail, want)
		}
	}
}
