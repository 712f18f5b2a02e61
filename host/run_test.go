package host

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared"
)

func TestScriptEnv(t *testing.T) {
	host := []string{
		"PATH=/bin", "HOME=/h", "LANG=C", "LC_ALL=C.UTF-8", "TERM=xterm", "TZ=UTC", "USER=u", "LOGNAME=u", "TMPDIR=/t",
		"OPENAI_API_KEY=sk-secret", "AWS_SECRET_ACCESS_KEY=x", "PASSME=1", "SSH_AUTH_SOCK=/s",
	}
	got := scriptEnv(host, []string{"PASSME", "NEW=v", "ABSENT", "PATH=/override"})
	want := []string{"PATH=/override", "HOME=/h", "LANG=C", "LC_ALL=C.UTF-8", "TERM=xterm", "TZ=UTC", "USER=u", "LOGNAME=u", "TMPDIR=/t", "PASSME=1", "NEW=v"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scriptEnv = %q\nwant %q", got, want)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "plain"), []byte(""), 0o644)
	env := []string{"PATH=/nonexistent:" + dir}
	if p, err := lookPath("tool", env); err != nil || p != exe {
		t.Errorf("lookPath(tool) = %q, %v", p, err)
	}
	if _, err := lookPath("plain", env); err == nil {
		t.Error("a non-executable file was found")
	}
	if p, err := lookPath("/abs/x", env); err != nil || p != "/abs/x" {
		t.Errorf("absolute paths pass through: %q %v", p, err)
	}
}

func TestResultText(t *testing.T) {
	g := grant.Grant{Timeout: 1500 * time.Millisecond}
	tests := []struct {
		res  RunReport
		want string
	}{
		{RunReport{}, "out\n"},
		{RunReport{ExitCode: 3}, "Error (exit 3):\nout\n"},
		{RunReport{ExitCode: -1, Signal: "SIGSEGV"}, "Error (signal SIGSEGV):\nout\n"},
		{RunReport{ExitCode: -1, Signal: "SIGTERM", TimedOut: true}, "Error (timed out):\nout\n\n[killed: exceeded 1.5s]\n"},
	}
	for _, tt := range tests {
		r := tt.res
		r.Grant, r.Output = g, "out\n"
		if got := r.Text(); got != tt.want {
			t.Errorf("Text(%+v) = %q, want %q", tt.res, got, tt.want)
		}
		if r.OK() != (tt.want == "out\n") {
			t.Errorf("OK(%+v) = %v", tt.res, r.OK())
		}
	}
}

func TestCappedBuffer(t *testing.T) {
	c := &cappedBuffer{limit: 10}
	for i := 0; i < 100; i++ {
		c.write([]byte("0123456789"))
	}
	if n := len(c.String()); n != 10+slack || !c.truncated {
		t.Fatalf("kept %d bytes, truncated=%v", n, c.truncated)
	}
}

// TestWriteTextMatchesText checks that the streaming rendering the CLI uses
// and Text agree, for joined and chunked output alike.
func TestWriteTextMatchesText(t *testing.T) {
	results := []*RunReport{
		{Output: "ok\n"},
		{Output: "partial", ExitCode: 3},
		{Output: "x", Signal: "SIGKILL", ExitCode: -1},
		{Output: "slow", TimedOut: true},
		{Output: ""},
	}
	for _, r := range results {
		var c cappedBuffer
		c.limit = 1 << 20
		for _, b := range []byte(r.Output) {
			c.write([]byte{b})
		}
		chunked := *r
		chunked.Output, chunked.chunks = "", c.chunks
		var b strings.Builder
		if err := chunked.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if b.String() != r.Text() {
			t.Errorf("WriteText = %q, Text = %q", b.String(), r.Text())
		}
		if joined := c.String(); joined != r.Output {
			t.Errorf("String = %q, want %q", joined, r.Output)
		}
	}
}

// A skill reached through a symlink is known by its real directory to
// everything a run derives from it: the request's SkillDir (what the
// sandbox lets scripts read), PYTHONPATH, and the check that refuses to
// resolve an interpreter a skill could have planted in its own directory.
func TestPrepareResolvesTheSkillDirectory(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	base := t.TempDir()
	real := filepath.Join(base, "real", "py-skill")
	for path, content := range map[string]string{
		filepath.Join(real, "SKILL.md"):            "---\nname: py-skill\ndescription: says hello\n---\n",
		filepath.Join(real, "scripts", "hello.py"): "print('hello')\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	roots := filepath.Join(base, "roots")
	if err := os.MkdirAll(roots, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(roots, "py-skill")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(Options{SkillRoots: []string{roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	p, err := h.prepare(RunRequest{Skill: "py-skill", Tool: "hello", Strategy: InProcessName})
	if err != nil {
		t.Fatal(err)
	}
	if p.skill.Dir == want {
		t.Fatalf("skill.Dir = %q is already resolved; the test needs it reached through %s", p.skill.Dir, link)
	}
	if p.request.SkillDir != want {
		t.Errorf("SkillDir = %q, want %q", p.request.SkillDir, want)
	}
	if first, _, _ := strings.Cut(getEnv(p.request.Env, "PYTHONPATH"), string(os.PathListSeparator)); first != want {
		t.Errorf("PYTHONPATH starts with %q, want %q", first, want)
	}
	// An interpreter the skill planted, answering as Python would, and
	// leaving a mark when it is run (that would be outside any sandbox).
	planted := filepath.Join(real, "bin", "python3")
	if err := os.MkdirAll(filepath.Dir(planted), 0o755); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "asked")
	answer := fmt.Sprintf("#!/bin/sh\n: >%s\necho %s; echo %s; echo %s\n", mark, planted, real, real)
	if err := os.WriteFile(planted, []byte(answer), 0o755); err != nil {
		t.Fatal(err)
	}
	pathDir := t.TempDir() // a PATH entry leading into the skill through its link
	if err := os.Symlink(filepath.Join(link, "bin", "python3"), filepath.Join(pathDir, "python3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", pathDir)
	h2, err := Open(Options{SkillRoots: []string{roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	// Preparing a confined run starts no plugin.
	pc, err := h2.prepare(RunRequest{Skill: "py-skill", Tool: "hello", Strategy: "landlock"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("the skill's own python3 was run to ask where it lives")
	}
	for _, tree := range pc.request.ExecPaths {
		if shared.Under(tree, want) {
			t.Errorf("ExecPaths grants %s, inside the skill", tree)
		}
	}
}
