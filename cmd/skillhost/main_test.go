package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

func TestMain(m *testing.M) {
	if os.Getenv(envRunCLI) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0") // the race runtime's exit pause would slow every supervised run
	testscript.Main(cleanedUp{m}, map[string]func(){
		"skillhost": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// cleanedUp removes the binaries the tests built once they have run:
// testscript.Main exits the process itself, and a directory of them
// (100 MB) was left in the temporary directory by every run.
type cleanedUp struct{ m *testing.M }

func (c cleanedUp) Run() int {
	defer testbin.Cleanup()
	return c.m.Run()
}

// plugins builds the real plugin binaries once, plus the example
// third-party plugin under its plugin name.
func plugins(t *testing.T) string {
	t.Helper()
	dir, err := testbin.Build("./cmd/skillhost-sandbox-null", "./cmd/skillhost-sandbox-landlock", "./cmd/skillhost-sandbox-seatbelt", "./examples/plugin-echo")
	if err != nil {
		t.Fatal(err)
	}
	echo := filepath.Join(dir, "skillhost-sandbox-echo")
	if _, err := os.Stat(echo); err != nil {
		if err := os.Link(filepath.Join(dir, "plugin-echo"), echo); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../../testdata/skills")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pluginDir := plugins(t)
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"status": status, "httpserve": httpserve},
		Condition: func(cond string) (bool, error) {
			if cond == "landlock" {
				return landlockWorks(pluginDir), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "xdg-config"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "xdg-data"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, "xdg-cache"))
			env.Setenv("SKILLHOST_SANDBOX__ENABLED", "false")
			env.Setenv("SKILLHOST_PLUGINS__DIRS", pluginDir)
			env.Setenv("PLUGINS", pluginDir)
			env.Setenv("REPO", repo)
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
	})
}

// status runs a command and checks its exit status: status 2 skillhost
// run x y. Its output is then checked with stdout and stderr as usual.
func status(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE COMMAND [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// landlockWorks reports whether the Landlock plugin can confine here.
func landlockWorks(pluginDir string) bool {
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: filepath.Join(pluginDir, "skillhost-sandbox-landlock")})
	if err != nil {
		return false
	}
	defer conn.Close()
	p, err := conn.Probe(context.Background())
	return err == nil && p.Status == shared.Healthy
}

// httpserve starts an HTTP server on ADDR (a loopback address) for the
// rest of the script, answering "hello from HOST" and whether the request
// carried the credential in $SECRET; it sets $HTTPPORT.
func httpserve(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: httpserve ADDR")
	}
	ln, err := net.Listen("tcp", args[0]+":0")
	if err != nil {
		ts.Fatalf("listen on %s: %v", args[0], err)
	}
	secret := ts.Getenv("SECRET")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		fmt.Fprintf(w, "hello from %s, credential %v\n", r.Host, secret != "" && auth == "Bearer "+secret)
	})}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("HTTPPORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}
