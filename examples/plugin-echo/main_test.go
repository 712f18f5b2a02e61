package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/runner"
	"github.com/skillhost/skillhost/shared/sharedtest"
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

func launch(pkg string) func(*testing.T, *syscall.Credential) sharedtest.Backend {
	return func(t *testing.T, cred *syscall.Credential) sharedtest.Backend {
		var attr *syscall.SysProcAttr
		if cred != nil {
			attr = &syscall.SysProcAttr{Credential: cred}
		}
		conn, err := shared.Launch(shared.LaunchConfig{Path: testbin.Path(pkg), AutoMTLS: true, SysProcAttr: attr,
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
	sharedtest.Conformance(t, launch(echoPkg)(t, nil), sharedtest.Options{})
}

// It claims only timeouts, so only the attacks on process lifetime apply.
func TestEscapes(t *testing.T) {
	sharedtest.Escapes(t, sharedtest.EscapeConfig{Launch: launch(echoPkg), Control: launch(nullPkg)})
}
