package landlock_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/conformance"
)

func TestConformance(t *testing.T) {
	conn := conformance.Launch(t, testbin.Path(landlockPkg))
	if p, _ := conn.Probe(context.Background()); p.Status != shared.Healthy {
		t.Skipf("landlock is %s here: %s", p.Status, p.Reason)
	}
	conformance.Conformance(t, conn, conformance.Options{})
}

// TestInterpreterOutsideTheSystem: an interpreter under $HOME (a pyenv
// shim, say) cannot run until admitted, and the error says how.
func TestInterpreterOutsideTheSystem(t *testing.T) {
	conn := conformance.Launch(t, testbin.Path(landlockPkg))
	home := t.TempDir()
	tools := filepath.Join(home, ".tools", "bin")
	os.MkdirAll(tools, 0o755)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip(err)
	}
	data, err := os.ReadFile(bash)
	if err != nil {
		t.Fatal(err)
	}
	interp := filepath.Join(tools, "bash")
	if err := os.WriteFile(interp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	skill := t.TempDir()
	req := shared.Request{
		Argv: []string{interp, "-c", "echo interpreted"}, Dir: skill, SkillDir: skill,
		Env:   []string{"PATH=/usr/bin:/bin", "HOME=" + home},
		Grant: shared.Grant{Timeout: 10 * time.Second}, OutputLimit: 1 << 20,
	}
	var out bytes.Buffer
	emit := func(b []byte) error { out.Write(b); return nil }
	_, err = conn.Execute(context.Background(), req, emit)
	want := "add " + filepath.Join(home, ".tools") + " to sandbox.interpreters"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to say %q", err, want)
	}
	// The reason crosses the process boundary as a code, not as words.
	if reason := shared.RefusedFor(err); reason != shared.ReasonInterpreter {
		t.Errorf("refusal reason %q, want %q", reason, shared.ReasonInterpreter)
	}
	req.ExecPaths = []string{filepath.Join(home, ".tools")}
	res, err := conn.Execute(context.Background(), req, emit)
	if err != nil || res.ExitCode != 0 || out.String() != "interpreted\n" {
		t.Fatalf("admitted interpreter: %v %+v %q", err, res, out.String())
	}
}

// TestWritePathIsCreated: a granted fs_write directory that does not exist
// yet is created, since Landlock can only grant what exists.
func TestWritePathIsCreated(t *testing.T) {
	conn := conformance.Launch(t, testbin.Path(landlockPkg))
	dir := t.TempDir()
	out := filepath.Join(dir, "out", "nested")
	req := shared.Request{
		Argv: []string{"/bin/sh", "-c", "echo ok > " + out + "/file && cat " + out + "/file"}, Dir: dir, SkillDir: dir,
		Env: []string{"PATH=/usr/bin:/bin"}, Grant: shared.Grant{FSWrite: []string{out}, Timeout: 10 * time.Second}, OutputLimit: 1 << 20,
	}
	var buf bytes.Buffer
	res, err := conn.Execute(context.Background(), req, func(b []byte) error { buf.Write(b); return nil })
	if err != nil || res.ExitCode != 0 || buf.String() != "ok\n" {
		t.Fatalf("%v %+v %q", err, res, buf.String())
	}
}
