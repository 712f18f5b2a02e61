package landlock_test

import (
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/sharedtest"
)

// escapeConfig starts the real Landlock plugin and, as the unconfined
// control, the null plugin, both as the given user.
func escapeConfig() sharedtest.EscapeConfig {
	launch := func(pkg string) func(*testing.T, *syscall.Credential) sharedtest.Backend {
		return func(t *testing.T, cred *syscall.Credential) sharedtest.Backend {
			var attr *syscall.SysProcAttr
			if cred != nil {
				attr = &syscall.SysProcAttr{Credential: cred}
			}
			conn, err := shared.Launch(shared.LaunchConfig{
				Path: testbin.Path(pkg), AutoMTLS: true, SysProcAttr: attr,
				Env: []string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0", "SKILLHOST_TEST_PLUGIN_SECRET=plugin-secret"},
			})
			if err != nil {
				t.Fatalf("launch %s: %v", pkg, err)
			}
			t.Cleanup(conn.Close)
			return conn
		}
	}
	return sharedtest.EscapeConfig{Launch: launch(landlockPkg), Control: launch(nullPkg)}
}

func TestEscapeSuite(t *testing.T) { sharedtest.Escapes(t, escapeConfig()) }

// The two attacks on the teardown itself, 10 times each (3 with -short).
func TestTeardownCannotBeOutrun(t *testing.T) {
	rounds := 10
	if testing.Short() {
		rounds = 3
	}
	sharedtest.Teardown(t, escapeConfig(), rounds)
}
