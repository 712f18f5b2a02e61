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
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "plugins.config.landlock.best_effort") {
		t.Fatalf("err = %v, want a refusal that names the way out", err)
	}
	if p, _ := e.Probe(context.Background()); p.BestEffort {
		t.Error("Probe says best effort before the setting was given")
	}
	check := func(t *testing.T, e *Executor, req shared.Request) {
		t.Helper()
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
	t.Run("setting", func(t *testing.T) {
		e := withFeatures(e.features)
		if problems, err := e.SetConfig(context.Background(), []byte(`{"best_effort": true}`)); err != nil || problems != nil {
			t.Fatalf("SetConfig: %v, %v", problems, err)
		}
		if p, _ := e.Probe(context.Background()); !p.BestEffort || p.Status == shared.Healthy {
			t.Errorf("Probe = %+v, want unhealthy with best effort", p)
		}
		check(t, e, req)
	})
	t.Run("request field of older hosts", func(t *testing.T) {
		req := req
		req.BestEffort = true
		check(t, withFeatures(e.features), req)
	})
}

// TestSettings checks that bad settings are refused by key and leave the
// previous ones in force.
func TestSettings(t *testing.T) {
	e := New()
	if problems, err := e.SetConfig(context.Background(), []byte(`{"best_effort": true}`)); err != nil || problems != nil {
		t.Fatalf("SetConfig: %v, %v", problems, err)
	}
	for doc, want := range map[string]shared.ConfigProblem{
		`{"best_effort": "yes"}`: {Key: "best_effort", Message: "a string is not allowed here; want a boolean (true or false)"},
		`{"besteffort": true}`:   {Key: "besteffort", Message: "unknown setting"},
		`[1]`:                    {Message: "the settings must be a mapping, not an array"},
	} {
		problems, err := e.SetConfig(context.Background(), []byte(doc))
		if err != nil || len(problems) != 1 || problems[0] != want {
			t.Errorf("SetConfig(%s) = %+v, %v; want %+v", doc, problems, err, want)
		}
	}
	if !e.bestEffort() {
		t.Error("refused settings replaced the ones in force")
	}
	if problems, _ := e.SetConfig(context.Background(), []byte(`{}`)); problems != nil || e.bestEffort() {
		t.Errorf("empty settings: %v, best effort %v; want the defaults", problems, e.bestEffort())
	}
}
