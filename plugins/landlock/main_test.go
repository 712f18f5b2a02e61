package landlock_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/plugins/landlock"
	"github.com/skillhost/skillhost/shared/conformance"
)

const (
	landlockPkg = "./cmd/skillhost-sandbox-landlock"
	nullPkg     = "./cmd/skillhost-sandbox-null"
)

func TestMain(m *testing.M) {
	// The runner's supervisors and confine helpers are this binary: the
	// backend's runner does their job in them.
	landlock.New()
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	// The escape suite's attacks on the host's environment need a secret
	// there from exec.
	conformance.WithHostSecret()
	if hosts := os.Getenv(envEgressNamespace); hosts != "" {
		if err := enterOwnNetwork(hosts); err != nil {
			fmt.Fprintln(os.Stderr, "the test's own network namespace:", err)
			os.Exit(1)
		}
	}
	if _, err := testbin.Build(landlockPkg, nullPkg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}
