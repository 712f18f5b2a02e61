package seatbelt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// macOS, as seen by the golden tests: the aliases, and a few symlinks.
var fakeLinks = map[string]string{
	"/Users/dev/link-to-data": "/Users/dev/data",
	"/Volumes/Work":           "/Users/dev/work",
}

var fakeExisting = map[string]bool{
	"/": true, "/Users": true, "/Users/dev": true, "/Users/dev/data": true, "/Users/dev/work": true,
	"/Users/dev/skills": true, "/Users/dev/skills/pdf": true, "/private": true, "/private/tmp": true,
	"/private/var": true, "/private/var/folders": true, "/private/var/folders/xy": true,
	"/private/var/folders/xy/T": true, "/private/var/folders/xy/T/skillhost-run-1": true,
	"/private/etc": true, "/private/etc/hosts": true, "/opt": true, "/opt/homebrew": true,
	"/Users/dev/odd": true,
}

func fakeEval(p string) (string, error) {
	if t, ok := fakeLinks[p]; ok {
		return t, nil
	}
	for link, target := range fakeLinks {
		if strings.HasPrefix(p, link+"/") {
			return fakeEval(target + strings.TrimPrefix(p, link))
		}
	}
	if fakeExisting[p] {
		return p, nil
	}
	return "", os.ErrNotExist
}

func fakeCanonical(p string) string { return canonicalWith(p, fakeEval) }

func TestCanonical(t *testing.T) {
	tests := map[string]string{
		"/tmp":                         "/private/tmp",
		"/tmp/x":                       "/private/tmp/x",
		"/var/folders/xy/T":            "/private/var/folders/xy/T",
		"/etc/hosts":                   "/private/etc/hosts",
		"/etcetera":                    "/etcetera",
		"/Users/dev/link-to-data/file": "/Users/dev/data/file",
		"/Volumes/Work/new/dir":        "/Users/dev/work/new/dir",
		"/tmp/not/yet/there":           "/private/tmp/not/yet/there",
		"/Users/dev/data/../work":      "/Users/dev/work",
	}
	for in, want := range tests {
		if got := fakeCanonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func goldenRequest(read, write []string, network bool) shared.Request {
	return shared.Request{
		RunID:    "golden",
		SkillDir: "/Users/dev/skills/pdf",
		Grant:    shared.Grant{FSRead: read, FSWrite: write, Network: network, Timeout: time.Minute},
	}
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name string
		req  shared.Request
	}{
		{"empty-grant", goldenRequest(nil, nil, false)},
		{"reads-only", goldenRequest([]string{"/Users/dev/data", "/opt/homebrew"}, nil, false)},
		{"writes", goldenRequest([]string{"/Users/dev/data"}, []string{"/Users/dev/work", "/Users/dev/work/out"}, false)},
		{"network-on", goldenRequest(nil, nil, true)},
		{"odd-paths", goldenRequest([]string{`/Users/dev/odd/with space`, `/Users/dev/odd/quote"d`, `/Users/dev/odd/back\slash`, "/Users/dev/odd/ünïcödé ✓", "/Users/dev/odd/paren)(x"}, nil, false)},
		{"symlinked-roots", goldenRequest([]string{"/etc/hosts", "/Users/dev/link-to-data"}, []string{"/tmp/x", "/Volumes/Work"}, false)},
		{"not-yet-existing-write", goldenRequest(nil, []string{"/tmp/new/deeper/dir"}, false)},
		{"egress", func() shared.Request {
			r := goldenRequest(nil, nil, true)
			r.Grant.Egress = &shared.Egress{Allow: []string{"api.anthropic.com", "*.github.com:443"}}
			return r
		}()},
		{"protected", func() shared.Request {
			r := goldenRequest(nil, []string{"/Users/dev/work"}, false)
			r.Grant.Protected = []string{"/Users/dev/work/.git/hooks", "/Users/dev/work/.bashrc"}
			return r
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Render(tt.req, Env{RunID: tt.req.RunID, TempDir: "/var/folders/xy/T/skillhost-run-1", SocketDir: "/tmp/skillhost-plugin-1", Canonical: fakeCanonical, ProxyPort: 41234})
			var params strings.Builder
			for _, prm := range p.Params {
				fmt.Fprintf(&params, "-D %s=%s\n", prm.Key, prm.Value)
			}
			checkGolden(t, tt.name+".sb", p.Text)
			checkGolden(t, tt.name+".params", params.String())
			if err := balanced(p.Text); err != nil {
				t.Errorf("unbalanced profile: %v", err)
			}
		})
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "seatbelt", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update if intended):\n%s", name, got)
	}
}

func TestRenderSemantics(t *testing.T) {
	home := "/Users/dev"
	p := Render(goldenRequest([]string{"/Users/dev/data"}, []string{"/tmp/x"}, false), Env{TempDir: "/var/folders/xy/T/skillhost-run-1", Canonical: fakeCanonical})
	for _, want := range []string{"(deny default (with message \"skillhost-run\"))", "(allow process-exec)"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("profile lacks %s", want)
		}
	}
	for _, never := range []string{"(allow mach-lookup)\n", "(allow network", "(allow default", "user-preference-read", "SecurityServer", home} {
		if strings.Contains(p.Text, never) {
			t.Errorf("profile contains %q", never)
		}
	}
	if p.Readable(home) || p.Readable(home+"/.ssh/id_rsa") || !p.Readable("/Users/dev/data/f") || !p.Writable("/private/tmp/x/f") || p.Writable("/private/tmp/xy") {
		t.Error("Readable/Writable disagree with the grant")
	}
	if all := Render(goldenRequest([]string{"/"}, nil, false), Env{Canonical: fakeCanonical}); !all.Readable(home + "/f") {
		t.Error("a grant of / does not make everything readable")
	}
	net := Render(goldenRequest(nil, nil, true), Env{Canonical: fakeCanonical})
	if !strings.Contains(net.Text, "(allow network-outbound)") || !strings.Contains(net.Text, `"com.apple.trustd.agent"`) {
		t.Error("network on lacks outbound access or trustd")
	}
	if strings.Contains(net.Text, "SOCKET_DIR") {
		t.Error("no socket directory, no rule")
	}
}

func TestCommand(t *testing.T) {
	p := Render(goldenRequest([]string{"/Users/dev/data"}, []string{"/tmp/x"}, false), Env{TempDir: "/tmp/t", Canonical: fakeCanonical})
	got := Command("/usr/bin/sandbox-exec", "/tmp/p.sb", p, []string{"/bin/bash", "/s/x.sh", "a b"})
	want := []string{
		"/usr/bin/sandbox-exec", "-f", "/tmp/p.sb",
		"-D", "SKILL_0=/Users/dev/skills/pdf", "-D", "RO_0=/Users/dev/data", "-D", "RW_0=/private/tmp/x", "-D", "TMP_0=/private/tmp/t",
		"-D", "META_0=/Users/dev/skills", "-D", "META_1=/Users/dev", "-D", "META_2=/Users", "-D", "META_3=/private/tmp", "-D", "META_4=/private",
		"/bin/bash", "/s/x.sh", "a b",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Command =\n%q\nwant\n%q", got, want)
	}
}

// balanced checks that every ( has its ), outside string literals, and
// that string literals close.
func balanced(text string) error {
	depth, inString := 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return fmt.Errorf("unmatched ) at byte %d", i)
			}
		}
	}
	if inString {
		return fmt.Errorf("unterminated string")
	}
	if depth != 0 {
		return fmt.Errorf("%d unclosed (", depth)
	}
	return nil
}

// paramRef matches a reference to a profile parameter by name.
var paramRef = regexp.MustCompile(`\(param "[^"]*"\)`)

// FuzzRender renders profiles for arbitrary grants: every profile must be
// balanced, and no path of the grant may appear in its text (paths travel
// only as parameters).
func FuzzRender(f *testing.F) {
	f.Add("/Users/dev/data\n/tmp/x", "/tmp/out", false, "run-1")
	f.Add(`/a"b\c`, `/x)(y`, true, `r"un`)
	f.Add("/ü/\x00/;comment", "", false, "")
	f.Add("relative/path", "~/x", true, "a\nb")
	f.Fuzz(func(t *testing.T, reads, writes string, network bool, runID string) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, "\n")
		}
		req := shared.Request{RunID: runID, SkillDir: "/skill", Grant: shared.Grant{FSRead: split(reads), FSWrite: split(writes), Network: network}}
		env := Env{RunID: runID, TempDir: "/tmp/t", SocketDir: "/tmp/sock", Canonical: func(s string) string { return s }}
		p := Render(req, env)
		// The same profile without the grant's paths: a path that spells
		// some of its own words ("un" in "unix-socket") is not a leak.
		noPaths := req
		noPaths.Grant.FSRead, noPaths.Grant.FSWrite = nil, nil
		baseline := paramRef.ReplaceAllString(Render(noPaths, env).Text, "(param)")
		if err := balanced(p.Text); err != nil {
			t.Fatalf("%v\n%s", err, p.Text)
		}
		// Parameter names are the profile's own words: a path that
		// happens to spell one ("A_0" in META_0) is not a path in the text.
		text := paramRef.ReplaceAllString(p.Text, "(param)")
		for _, path := range append(split(reads), split(writes)...) {
			if len(path) > 2 && strings.Contains(text, path) && !strings.Contains(baseline, path) {
				t.Fatalf("path %q appears in the profile text", path)
			}
		}
		for _, prm := range p.Params {
			if strings.Contains(prm.Key, "=") || prm.Key == "" {
				t.Fatalf("bad parameter name %q", prm.Key)
			}
		}
	})
}
