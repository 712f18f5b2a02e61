// Package conformance holds a sandbox backend to the shared.Executor
// contract, whatever language it is written in: Conformance checks
// timeouts, output limits, exit codes, signals, environment passing and
// streaming order; Escapes runs real attacks, each with an unconfined
// control, against every protection the backend claims in Info.Enforces,
// and Teardown the attacks on a run's lifetime. Launch starts a real plugin
// binary for a test and InProcess serves an implementation through the real
// gRPC adapters inside the test process.
//
// A backend's own test typically reads:
//
//	func TestConformance(t *testing.T) {
//		conn := conformance.Launch(t, pluginBinary)
//		conformance.Conformance(t, conn, conformance.Options{})
//	}
package conformance

import (
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/wire"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// Launch starts the plugin binary at path with AutoMTLS and stops it when
// the test ends.
func Launch(t testing.TB, path string) *pluginclient.Conn {
	t.Helper()
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: path, AutoMTLS: true, Env: []string{"PATH=/usr/bin:/bin"}})
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
	client, _ := plugin.TestPluginGRPCConn(t, false, wire.VersionedPlugins(impl, nil)[shared.ContractVersion])
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(shared.PluginName)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	return raw.(shared.Executor)
}
