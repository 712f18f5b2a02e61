// Package sharedtest helps sandbox backend authors test their plugin
// against the shared.Executor contract: Conformance checks timeouts, output
// limits, exit codes, signals, environment passing and streaming order;
// Launch starts a real plugin binary for a test and InProcess serves an
// implementation through the real gRPC adapters inside the test process.
//
// A backend's own test typically reads:
//
//	func TestConformance(t *testing.T) {
//		conn := sharedtest.Launch(t, pluginBinary)
//		sharedtest.Conformance(t, conn, sharedtest.Options{})
//	}
package sharedtest

import (
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/skillhost/skillhost/shared"
)

// Launch starts the plugin binary at path with AutoMTLS and stops it when
// the test ends.
func Launch(t testing.TB, path string) *shared.Conn {
	t.Helper()
	conn, err := shared.Launch(shared.LaunchConfig{Path: path, AutoMTLS: true, Env: []string{"PATH=/usr/bin:/bin"}})
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
	client, _ := plugin.TestPluginGRPCConn(t, false, shared.VersionedPlugins(impl)[shared.ContractVersion])
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(shared.PluginName)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	return raw.(shared.Executor)
}
