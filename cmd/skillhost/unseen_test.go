package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testskill"
	"github.com/skillhost/skillhost/shared"
)

// A confined run that fails after being handed a path outside its grant
// says which argument the sandbox kept from the script and the grant that
// shows it: with the view the path is simply not there, so no denial
// would say it (a public skill's validator answered "SKILL.md not found").
func TestUnseenArgument(t *testing.T) {
	pluginDir := plugins(t)
	if !landlockWorks(pluginDir) {
		t.Skip("the landlock plugin cannot confine here")
	}
	skills := t.TempDir()
	testskill.Add(t, skills, "check", testskill.Skill{Name: "check", Description: "checks a directory", Body: "# check\n",
		Scripts: map[string]string{"has.sh": "#!/bin/sh\nif [ -e \"$1/SKILL.md\" ]; then echo found; else echo \"SKILL.md not found\"; exit 1; fi\n"}})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("SKILLHOST_SANDBOX__ENABLED", "true")
	open := func(t *testing.T, env ...string) *host.Host {
		for i := 0; i+1 < len(env); i += 2 {
			t.Setenv(env[i], env[i+1])
		}
		h, err := host.Open(host.Options{SkillRoots: []string{skills}, PluginDirs: []string{pluginDir}, Warnings: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	unseen := func(res *host.RunReport) []shared.Violation {
		var out []shared.Violation
		for _, v := range res.Violations {
			if v.Kind == host.Unseen {
				out = append(out, v)
			}
		}
		return out
	}
	run := func(t *testing.T, h *host.Host, strategy string, args ...string) *host.RunReport {
		res, err := h.Run(context.Background(), host.RunRequest{Skill: "check", Tool: "has", Strategy: strategy, Args: args}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	t.Run("outside the grant", func(t *testing.T) {
		res := run(t, open(t), "landlock", outside)
		got := unseen(res)
		if res.OK() || len(got) != 1 || got[0].Target != outside {
			t.Fatalf("output %q, unseen %+v: want a failed run and one unseen argument, %s", res.Text(), got, outside)
		}
		want := `the argument "` + outside + `" names ` + outside + `, which the sandbox kept from the script: outside the grant; grant it with skills.grants.check.fs_read: ["` + outside + `"]`
		if !strings.HasPrefix(got[0].Detail, want) {
			t.Errorf("detail =\n%s\nwant it to start\n%s", got[0].Detail, want)
		}
		// The text, which is what an agent reads, says it after the output.
		if text := res.Text(); !strings.Contains(text, "SKILL.md not found\n\n[skillhost: "+want) {
			t.Errorf("text:\n%s\nwant the note after the output", text)
		}
	})
	t.Run("granted", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		text := "skills:\n  grants:\n    check:\n      fs_read: [" + outside + "]\nsandbox:\n  fs_read: [" + outside + "]\n"
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		h := open(t, "SKILLHOST_CONFIG", cfg)
		if res := run(t, h, "landlock", outside); !res.OK() || len(unseen(res)) > 0 {
			t.Fatalf("granted: output %q, violations %+v", res.Text(), res.Violations)
		}
	})
	t.Run("not confined", func(t *testing.T) {
		if res := run(t, open(t), "null", outside); !res.OK() || len(unseen(res)) > 0 {
			t.Fatalf("null: output %q, violations %+v", res.Text(), res.Violations)
		}
	})
	t.Run("not a path", func(t *testing.T) {
		res := run(t, open(t), "landlock", "no-such-name-here")
		if res.OK() || len(unseen(res)) > 0 {
			t.Fatalf("an argument naming nothing: output %q, violations %+v", res.Text(), res.Violations)
		}
	})
}
