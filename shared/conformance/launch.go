// Package conformance holds a sandbox backend to the shared.Executor
// contract, whatever language it is written in: Conformance checks
// timeouts, output limits, exit codes, signals, environment passing and
// streaming order; Escapes runs real attacks, each with an unconfined
// control, against every protection the backend claims in Info.Enforces,
// judging each by its effect outside the sandbox (an effect a namespace
// the backend declares in Info.Isolation keeps inside the run does not
// count), and Teardown the attacks on a run's lifetime. Launch starts a real plugin
// binary for a test (LaunchAs as another user, Launcher for the escape
// suite), InProcess serves an implementation through the real gRPC
// adapters inside the test process, and Control is the unconfined control
// backend the escape suite compares against: the null plugin, built by the
// kit.
//
// A backend's own test typically reads:
//
//	func TestConformance(t *testing.T) {
//		conn := conformance.Launch(t, pluginBinary)
//		conformance.Conformance(t, conn, conformance.Options{})
//	}
//
//	func TestEscapes(t *testing.T) {
//		conformance.Escapes(t, conformance.EscapeConfig{Launch: conformance.Launcher(pluginBinary), Control: conformance.Control})
//	}
package conformance

import (
	"syscall"
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/pluginset"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// Launch starts the plugin binary at path with AutoMTLS, as the test's own
// user, and stops it when the test ends. LaunchAs starts it as another.
func Launch(t testing.TB, path string) *pluginclient.Conn {
	t.Helper()
	return launch(t, path, nil)
}

// launch starts the plugin at path with attr applied to its process (nil:
// none). Its environment is a fixed PATH and, so that a plugin built with
// -race exits promptly, GORACE=atexit_sleep_ms=0.
func launch(t testing.TB, path string, attr *syscall.SysProcAttr) *pluginclient.Conn {
	t.Helper()
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: path, AutoMTLS: true, SysProcAttr: attr,
		Env: []string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}})
	if err != nil {
		t.Fatalf("launch %s: %v", path, err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// InProcess serves impl over go-plugin's gRPC transport inside the test
// process and returns the host-side Executor.
func InProcess(t testing.TB, impl shared.Executor) shared.Executor {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, pluginset.Versioned(impl, nil)[shared.ContractVersion])
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(shared.PluginName)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	return raw.(shared.Executor)
}
