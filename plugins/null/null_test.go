package null_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/plugins/null"
	"github.com/skillhost/skillhost/shared/conformance"
)

func TestMain(m *testing.M) {
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
	conformance.Conformance(t, conformance.InProcess(t, null.New()), conformance.Options{})
}

// TestConformanceBinary runs them against the real plugin binary over
// go-plugin.
func TestConformanceBinary(t *testing.T) {
	conn := conformance.Launch(t, testbin.Path("./cmd/skillhost-sandbox-null"))
	conformance.Conformance(t, conn, conformance.Options{})
}
