package null_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared/conformance"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// TestConformanceFastPath runs the contract's tests against the real plugin
// binaries on the one-shot fast path (two pipes, no go-plugin): the binary
// for one-shot hosts a host starts where it is there, and the plugin's own
// where it is not (or the plugin is pinned).
func TestConformanceFastPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noLean bool
		want   string
	}{
		{"one-shot binary", false, "skillhost-oneshot-null"},
		{"plugin binary", true, "skillhost-sandbox-null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := pluginclient.Launch(pluginclient.LaunchConfig{
				Path: testbin.Path("./cmd/skillhost-sandbox-null"), OneShot: true, NoOneShotBinary: tc.noLean,
				Env: []string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(conn.Close)
			if conn.SocketDir() != "" {
				t.Fatalf("the plugin came up over go-plugin (socket %s), not on the fast path", conn.SocketDir())
			}
			if got := filepath.Base(conn.Binary()); got != tc.want {
				t.Fatalf("started %s, want %s", got, tc.want)
			}
			conformance.Conformance(t, conn, conformance.Options{})
		})
	}
}

// The binary for one-shot hosts, started by hand, says what it is for
// and which binary to start instead, and fails.
func TestOneShotBinaryByHand(t *testing.T) {
	cmd := exec.Command(filepath.Join(filepath.Dir(testbin.Path("./cmd/skillhost-sandbox-null")), "skillhost-oneshot-null"))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2", err)
	}
	if !strings.Contains(string(out), "skillhost run") || !strings.Contains(string(out), "skillhost-sandbox-NAME") {
		t.Errorf("it says %q; want what it serves and the binary to start", out)
	}
}
