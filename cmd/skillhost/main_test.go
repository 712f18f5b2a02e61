package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/skillhost/skillhost/shared/runner"
)

func TestMain(m *testing.M) {
	runner.Init()
	os.Setenv("GORACE", "atexit_sleep_ms=0") // the race runtime's exit pause would slow every supervised run
	testscript.Main(m, map[string]func(){
		"skillhost": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../../testdata/skills")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "xdg-config"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "xdg-data"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, "xdg-cache"))
			env.Setenv("SKILLHOST_SANDBOX__ENABLED", "false")
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
	})
}
