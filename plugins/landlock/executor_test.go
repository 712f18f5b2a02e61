package landlock

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

func withFeatures(f Features) *Executor {
	e := New()
	e.once.Do(func() {})
	e.features = f
	return e
}

func run(t *testing.T, e *Executor, req shared.Request) (string, shared.Result, error) {
	t.Helper()
	var out bytes.Buffer
	res, err := e.Execute(context.Background(), req, func(b []byte) error { out.Write(b); return nil })
	return out.String(), res, err
}

// TestFailsClosed: without Landlock the plugin refuses to run anything
// unless best effort is asked for, and then says what it did not enforce.
func TestFailsClosed(t *testing.T) {
	e := withFeatures(Features{Missing: "Landlock is not available in this kernel (test)", Seccomp: true, Uid: os.Geteuid()})
	dir := t.TempDir()
	req := shared.Request{
		Argv: []string{"/bin/sh", "-c", "cat /etc/hostname >/dev/null && echo read-outside"}, Dir: dir,
		Env:   []string{"PATH=/usr/bin:/bin"},
		Grant: shared.Grant{Timeout: 10 * time.Second}, SkillDir: dir, OutputLimit: 1 << 20,
	}
	_, _, err := run(t, e, req)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "best_effort") {
		t.Fatalf("err = %v, want a refusal that names the way out", err)
	}
	req.BestEffort = true
	out, res, err := run(t, e, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "read-outside") {
		t.Errorf("best effort without Landlock cannot confine files: %q", out)
	}
	if !strings.Contains(strings.Join(res.NotEnforced, "\n"), "filesystem confinement") {
		t.Errorf("NotEnforced = %q", res.NotEnforced)
	}
}
