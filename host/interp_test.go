package host

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
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
