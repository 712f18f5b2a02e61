package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host"
)

// A run that fails with ModuleNotFoundError gets the fix doctor would give
// when another python3 on the scripts' PATH has the module (issue 35):
// Host.ImportAdvice, which the CLI's run prints as a warning.
func TestImportAdvice(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	pluginDir := plugins(t)
	if !landlockWorks(pluginDir) {
		t.Skip("the landlock plugin cannot confine here")
	}
	base := t.TempDir()
	py := filepath.Join(base, "py")
	mods := filepath.Join(py, "mods")
	files := map[string]string{
		filepath.Join(py, "plain", "python3"):                           "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n",
		filepath.Join(py, "withmods", "python3"):                        "#!/bin/sh\nPYTHONPATH=" + mods + "${PYTHONPATH:+:$PYTHONPATH} exec /usr/bin/python3 \"$@\"\n",
		filepath.Join(mods, "advmod_for_skillhost", "__init__.py"):      "",
		filepath.Join(base, "skills", "needs", "SKILL.md"):              "---\nname: needs\ndescription: imports a module one python3 has\n---\n",
		filepath.Join(base, "skills", "needs", "scripts", "use.py"):     "import advmod_for_skillhost\nprint('imported')\n",
		filepath.Join(base, "skills", "needs", "scripts", "nowhere.py"): "import nowhere_for_skillhost\nprint('never')\n",
	}
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", strings.Join([]string{filepath.Join(py, "plain"), filepath.Join(py, "withmods"), "/usr/bin", "/bin"}, ":"))
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("SKILLHOST_SANDBOX__ENABLED", "true")
	t.Setenv("SKILLHOST_SANDBOX__INTERPRETERS", py)
	h, err := host.Open(host.Options{SkillRoots: []string{filepath.Join(base, "skills")}, PluginDirs: []string{pluginDir}, Warnings: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()

	req := host.RunRequest{Skill: "needs", Tool: "use", Strategy: "landlock"}
	res, err := h.Run(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || !strings.Contains(res.Text(), "ModuleNotFoundError") {
		t.Fatalf("the run was to fail with ModuleNotFoundError:\n%s", res.Text())
	}
	advice := h.ImportAdvice(ctx, req, res)
	other := filepath.Join(py, "withmods", "python3")
	want := "needs/use: " + filepath.Join(py, "plain", "python3") + " cannot import advmod_for_skillhost; " + other + " has it: set skills.grants.needs.interpreter: " + other + " in the configuration"
	if !strings.HasPrefix(advice, want) {
		t.Errorf("ImportAdvice =\n%s\nwant it to start\n%s", advice, want)
	}

	// No python3 has it: nothing to say beyond the traceback.
	req = host.RunRequest{Skill: "needs", Tool: "nowhere", Strategy: "landlock"}
	if res, err = h.Run(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	if advice := h.ImportAdvice(ctx, req, res); advice != "" {
		t.Errorf("ImportAdvice for a module no python3 has = %q", advice)
	}
}
