package null_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/plugins/null"
	"github.com/skillhost/skillhost/shared/runner"
	"github.com/skillhost/skillhost/shared/sharedtest"
)

func TestMain(m *testing.M) {
	runner.Init()
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	if _, err := testbin.Build("./cmd/skillhost-sandbox-null"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// TestConformanceInProcess runs the contract's tests through the real gRPC
// adapters inside this process.
func TestConformanceInProcess(t *testing.T) {
	sharedtest.Conformance(t, sharedtest.InProcess(t, null.New()), sharedtest.Options{})
}

// TestConformanceBinary runs them against the real plugin binary over
// go-plugin.
func TestConformanceBinary(t *testing.T) {
	conn := sharedtest.Launch(t, testbin.Path("./cmd/skillhost-sandbox-null"))
	sharedtest.Conformance(t, conn, sharedtest.Options{})
}
