package null_test

import (
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared/conformance"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// TestConformanceFastPath runs the contract's tests against the real plugin
// binary on the one-shot fast path (two pipes, no go-plugin).
func TestConformanceFastPath(t *testing.T) {
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{
		Path: testbin.Path("./cmd/skillhost-sandbox-null"), OneShot: true,
		Env: []string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	if conn.SocketDir() != "" {
		t.Fatalf("the plugin came up over go-plugin (socket %s), not on the fast path", conn.SocketDir())
	}
	conformance.Conformance(t, conn, conformance.Options{})
}
