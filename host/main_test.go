package host

import (
	"os"
	"testing"
)

// TestMain keeps the tests' caches (the matcher's breadths) out of the
// user's cache directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "skillhost-host-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
