package landlock_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/plugins/landlock"
	"github.com/skillhost/skillhost/shared/conformance"
)

const (
	landlockPkg = "./cmd/skillhost-sandbox-landlock"
	nullPkg     = "./cmd/skillhost-sandbox-null"
)

// hostSecret sits in this test process's environment, which plays the
// host's: no script may ever see it.
const hostSecret = conformance.EnvHostSecret + "=correct-horse-battery-staple"

func TestMain(m *testing.M) {
	// The runner's supervisors and confine helpers are this binary: the
	// backend's runner does their job in them.
	landlock.New()
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	// /proc/<pid>/environ shows the environment a process was started
	// with, so the secret must be there from exec: start over with it.
	if name, _, _ := strings.Cut(hostSecret, "="); os.Getenv(name) == "" {
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, os.Args, append(os.Environ(), hostSecret))
		}
		fmt.Fprintln(os.Stderr, "re-exec with the host secret:", err)
		os.Exit(1)
	}
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
