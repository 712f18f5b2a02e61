package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost/shared/conformance"
)

// plugin is the example built from this directory, as any backend's test
// would build its own binary: with the go command, into a directory
// anyone can read, since the escape suite also runs it as nobody. The test
// imports only public packages, so that it works unchanged in a module of
// its own (docs/plugins.md; internal/thirdparty proves it).
var plugin string

func TestMain(m *testing.M) {
	// The escape suite's attacks on the host's environment need a secret
	// there from the start.
	conformance.WithHostSecret()
	dir, err := os.MkdirTemp("", "plugin-echo-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugin = filepath.Join(dir, "skillhost-sandbox-echo")
	if out, err := exec.Command("go", "build", "-o", plugin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The example passes the same suites a third-party backend must.
func TestConformance(t *testing.T) {
	conformance.Conformance(t, conformance.Launch(t, plugin), conformance.Options{})
}

// It claims only timeouts, so only the attacks on process lifetime apply;
// each runs against the null plugin, the control the kit builds.
func TestEscapes(t *testing.T) {
	conformance.Escapes(t, conformance.EscapeConfig{Launch: conformance.Launcher(plugin), Control: conformance.Control})
}
