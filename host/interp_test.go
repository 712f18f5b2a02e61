package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/internal/testskill"
)

func TestSuggestTree(t *testing.T) {
	tests := map[string]string{
		"/home/u/.pyenv/shims/python3":                       "~/.pyenv",
		"/home/u/.nvm/versions/node/v20/bin/node":            "~/.nvm",
		"/opt/homebrew/Cellar/python@3.12/3.12.1/bin/python": "/opt/homebrew",
		"/opt/conda/envs/x/bin/python":                       "/opt/conda/envs/x",
		"/srv/miniconda3/bin/python3":                        "/srv/miniconda3",
	}
	for in, want := range tests {
		if got := SuggestTree(in, "/home/u"); got != want {
			t.Errorf("SuggestTree(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProgramIndex(t *testing.T) {
	tests := []struct {
		argv []string
		want int
	}{
		{[]string{"python3", "x.py"}, 0},
		{[]string{"/usr/bin/env", "python3"}, 1},
		{[]string{"/usr/bin/env", "python3", "x.py"}, 1},
		{[]string{"/usr/bin/env", "-S", "python3 -u"}, 0},
		{[]string{"/usr/bin/env", "A=1", "python3"}, 0},
		{[]string{"/bin/bash"}, 0},
	}
	for _, tt := range tests {
		if got := programIndex(tt.argv); got != tt.want {
			t.Errorf("programIndex(%q) = %d, want %d", tt.argv, got, tt.want)
		}
	}
}

func TestResolveInstallationFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "cellar", "tool", "1.0", "bin", "tool")
	link := filepath.Join(dir, "brew", "bin", "tool")
	for _, d := range []string{filepath.Dir(real), filepath.Dir(link)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	inst := resolveInstallation(link, nil, dir, "")
	dir, _ = filepath.EvalSymlinks(dir)
	// A link is run through its target, so only the target's tree is needed.
	want := []string{filepath.Join(dir, "cellar", "tool", "1.0")}
	if inst.Real != filepath.Join(dir, "cellar", "tool", "1.0", "bin", "tool") || !reflect.DeepEqual(inst.Trees, want) {
		t.Errorf("installation = %+v, want trees %q", inst, want)
	}
}

func TestScriptEnvHelpers(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin", "HOME=/h"}
	env = prependPath(env, "/opt/py/bin")
	env = prependPath(env, "/opt/py/bin")
	if got := getEnv(env, "PATH"); got != "/opt/py/bin:/usr/bin:/bin" {
		t.Errorf("PATH = %q", got)
	}
	env = setEnv(env, "PYTHONPATH", joinList("/skill", getEnv(env, "PYTHONPATH")))
	if got := getEnv(env, "PYTHONPATH"); got != "/skill" {
		t.Errorf("PYTHONPATH = %q", got)
	}
}

func TestKnownInterpreter(t *testing.T) {
	for name, want := range map[string]bool{
		"/h/.pyenv/shims/python3": true, "/x/python3.12": true, "/x/python": true, "/x/node": true, "/x/ruby3.2": true,
		"/x/perl5.36": true, "/x/bash": true, "/x/gh": false, "/x/nodemon": false, "/x/rubocop": false, "/x/cat": false,
	} {
		if got := knownInterpreter(name); got != want {
			t.Errorf("knownInterpreter(%q) = %v, want %v", name, got, want)
		}
	}
}

// Resolving an interpreter runs nothing: not a python3 a confined run
// planted in a virtual environment it could write (first on PATH), and not
// the start-up hooks (.pth) such a run planted in a real one. Each plant is
// first shown to work when its interpreter is run unconfined.
func TestResolveRunsNothingPlanted(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, venv, mark string)
	}{
		{"replaced interpreter", func(t *testing.T, venv, mark string) {
			py := filepath.Join(venv, "bin", "python3")
			os.Remove(py)
			script := "#!/bin/sh\n: > " + mark + "\necho " + py + "; echo /; echo /\n"
			if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{".pth hook", func(t *testing.T, venv, mark string) {
			site, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
			if len(site) == 0 {
				t.Skip("the virtual environment has no site-packages")
			}
			hook := "import os; open(" + strconv.Quote(mark) + ", 'w')\n"
			if err := os.WriteFile(filepath.Join(site[0], "zz.pth"), []byte(hook), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			project := t.TempDir()
			venv := filepath.Join(project, ".venv")
			if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
				t.Skipf("python3 -m venv: %v\n%s", err, out)
			}
			mark := filepath.Join(t.TempDir(), "ran")
			tt.plant(t, venv, mark)
			py := filepath.Join(venv, "bin", "python3")

			inst := resolveInstallation(py, []string{"PATH=" + filepath.Join(venv, "bin") + ":/usr/bin:/bin"}, project, "")
			if _, err := os.Stat(mark); err == nil {
				t.Fatal("resolving the interpreter ran what the run planted")
			}
			if inst.Real != py || !slices.Contains(inst.Trees, venv) {
				t.Errorf("installation = %+v; want %s run by its own path, its venv granted", inst, py)
			}
			for _, tree := range inst.Trees {
				if tree == "/" {
					t.Errorf("a planted answer granted %s", tree)
				}
			}
			// The control: run unconfined, the plant does run.
			exec.Command(py, "-c", "pass").Run()
			if _, err := os.Stat(mark); err != nil {
				t.Fatalf("control: the plant does not run even unconfined, so the test proves nothing: %v", err)
			}
		})
	}
}

// A pyenv shim resolves, without running, to the version its files name:
// the variable, then the nearest .python-version above the working
// directory, then the global version file; a name that is a path is
// ignored, and "system" is the next python3 on PATH.
func TestResolveShimStatically(t *testing.T) {
	root := t.TempDir()
	shim := filepath.Join(root, "shims", "python3")
	for _, v := range []string{"3.11.7", "3.12.1"} {
		writeExe(t, filepath.Join(root, "versions", v, "bin", "python3"), "#!/bin/sh\nexit 0\n")
	}
	writeExe(t, shim, "#!/bin/sh\ntouch \"$0.ran\"\n")
	sys := t.TempDir()
	writeExe(t, filepath.Join(sys, "python3"), "#!/bin/sh\n")
	project := filepath.Join(t.TempDir(), "proj", "sub")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + filepath.Dir(shim) + ":" + sys
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "version"), "3.11.7\n")
	check := func(env []string, want string) {
		t.Helper()
		got, ok := resolveShim(shim, env, project, "")
		if !ok || got != want {
			t.Errorf("resolveShim = %q, %v; want %q", got, ok, want)
		}
	}
	check([]string{path}, filepath.Join(root, "versions", "3.11.7", "bin", "python3"))
	write(filepath.Join(filepath.Dir(project), ".python-version"), "# pinned\n3.12.1\n")
	check([]string{path}, filepath.Join(root, "versions", "3.12.1", "bin", "python3"))
	check([]string{path, "PYENV_VERSION=3.11.7"}, filepath.Join(root, "versions", "3.11.7", "bin", "python3"))
	check([]string{path, "PYENV_VERSION=system"}, filepath.Join(sys, "python3"))
	write(filepath.Join(project, ".python-version"), "../../../../usr\n3.11.7\n")
	check([]string{path}, filepath.Join(root, "versions", "3.11.7", "bin", "python3"))
	if _, err := os.Stat(shim + ".ran"); err == nil {
		t.Error("the shim was run")
	}
}

func writeExe(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The operator picks a skill's interpreter (skills.grants.NAME.interpreter):
// it runs the skill's scripts of its language, and only those.
func TestPickedInterpreter(t *testing.T) {
	noUserConfig(t)
	bin := t.TempDir()
	writeExe(t, filepath.Join(bin, "python3"), "#!/bin/sh\n")
	writeExe(t, filepath.Join(bin, "bash"), "#!/bin/sh\n")
	t.Setenv("PATH", bin)
	picked := filepath.Join(t.TempDir(), "python3")
	writeExe(t, picked, "#!/bin/sh\n")
	root := t.TempDir()
	testskill.Write(t, filepath.Join(root, "pdf"), testskill.FrontMatter("", "name: pdf", "description: PDFs"), map[string]string{
		"scripts/check.py": "print(1)\n", "scripts/run.sh": "#!/usr/bin/env bash\necho\n", "scripts/env.py": "#!/usr/bin/env python3\nprint(1)\n",
	})
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("skills:\n  grants:\n    pdf:\n      interpreter: "+picked+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Open(Options{ConfigPath: cfg, SkillRoots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for tool, want := range map[string]string{"check": picked, "env": picked, "run": "bash"} { // env finds bash itself
		p, err := h.prepare(RunRequest{Skill: "pdf", Tool: tool, Strategy: InProcessName})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.request.Argv[programIndex(p.request.Argv)]; got != want {
			t.Errorf("%s runs with %s, want %s", tool, got, want)
		}
	}
}

// An interpreter in a tree that runs can write (here the working
// directory, any run's workspace) is not resolved and granted by its
// links: a run could have planted a link there pointing anywhere.
func TestNoResolutionInWritableTrees(t *testing.T) {
	noUserConfig(t)
	project := t.TempDir()
	project, _ = filepath.EvalSymlinks(project)
	elsewhere := t.TempDir()
	writeExe(t, filepath.Join(elsewhere, "bin", "python3"), "#!/bin/sh\n")
	if err := os.MkdirAll(filepath.Join(project, ".venv", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The control: outside the project the same link is followed and its
	// tree granted.
	if inst := resolveInstallation(filepath.Join(elsewhere, "bin", "python3"), nil, project, ""); len(inst.Trees) == 0 {
		t.Fatalf("control: %+v grants nothing", inst)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "bin", "python3"), filepath.Join(project, ".venv", "bin", "python3")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	h, err := Open(Options{SkillRoots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if !h.writableByScripts(filepath.Join(project, ".venv", "bin", "python3"), grant.Grant{}) {
		t.Error("an interpreter in the working directory counts as out of runs' reach")
	}
}
