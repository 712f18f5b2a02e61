//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/shared/conformance"
)

// plugin is the example built from this directory, into a directory anyone
// can read: the suites also run it as nobody.
var plugin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "plugin-bwrap-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugin = filepath.Join(dir, "skillhost-sandbox-bwrap")
	if out, err := exec.Command("go", "build", "-o", plugin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needBwrap skips where bubblewrap is missing or cannot make namespaces;
// CI installs it (.ci/deps), and there it must work.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := bwrapPath(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// users are the test's own user and, when that is root, nobody.
func users() map[string]*syscall.Credential {
	u := map[string]*syscall.Credential{"self": nil}
	if os.Geteuid() == 0 {
		u["nobody"] = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	return u
}

func TestConformance(t *testing.T) {
	needBwrap(t)
	for name, cred := range users() {
		t.Run(name, func(t *testing.T) {
			conformance.Conformance(t, conformance.LaunchAs(t, plugin, cred), conformance.Options{})
		})
	}
}

func TestEscapes(t *testing.T) {
	needBwrap(t)
	conformance.Escapes(t, conformance.EscapeConfig{
		Launch:  conformance.Launcher(plugin),
		Control: conformance.Control,
	})
}
