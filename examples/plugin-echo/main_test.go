package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared/conformance"
	"github.com/skillhost/skillhost/shared/pluginclient"
	"github.com/skillhost/skillhost/shared/runner"
)

const (
	echoPkg = "./examples/plugin-echo"
	nullPkg = "./cmd/skillhost-sandbox-null"
)

func TestMain(m *testing.M) {
	runner.Init()
	if _, err := testbin.Build(echoPkg, nullPkg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func launch(pkg string) func(*testing.T, *syscall.Credential) conformance.Backend {
	return func(t *testing.T, cred *syscall.Credential) conformance.Backend {
		var attr *syscall.SysProcAttr
		if cred != nil {
			attr = &syscall.SysProcAttr{Credential: cred}
		}
		conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: testbin.Path(pkg), AutoMTLS: true, SysProcAttr: attr,
			Env: []string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}})
		if err != nil {
			t.Fatalf("launch %s: %v", pkg, err)
		}
		t.Cleanup(conn.Close)
		return conn
	}
}

// The example passes the same suites a third-party backend must.
func TestConformance(t *testing.T) {
	conformance.Conformance(t, launch(echoPkg)(t, nil), conformance.Options{})
}

// It claims only timeouts, so only the attacks on process lifetime apply.
func TestEscapes(t *testing.T) {
	conformance.Escapes(t, conformance.EscapeConfig{Launch: launch(echoPkg), Control: launch(nullPkg)})
}
