//go:build unix

package pluginclient

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCompanionNeverWaits: a FIFO where the supervisor binary would be is
// refused at once, not opened (which would wait for a writer forever and
// hold up every launch of the plugin).
func TestCompanionNeverWaits(t *testing.T) {
	dir := t.TempDir()
	plugin := filepath.Join(dir, "skillhost-sandbox-x")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "skillhost-supervisor-x"), 0o755); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := Companion(plugin)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was taken for the supervisor binary")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Companion waited on a FIFO")
	}
	// No supervisor binary at all is no error; a plugin not named
	// skillhost-sandbox-NAME has none.
	if f, err := Companion(filepath.Join(dir, "other")); f != nil || err != nil {
		t.Errorf("Companion(other) = %v, %v", f, err)
	}
}
