package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Output written before the command ended is kept even when the reader
// only gets to run after drainWait (100 runs at once in a plugin lost some
// this way).
func TestLateReaderKeepsOutput(t *testing.T) {
	modes(t, func(t *testing.T) {
		beforeDrain = func() { time.Sleep(2 * drainWait) }
		t.Cleanup(func() { beforeDrain = func() {} })
		res, out := run(t, Spec{Argv: bash("echo kept; echo also kept >&2")})
		if out != "kept\nalso kept\n" || res.ExitCode != 0 {
			t.Fatalf("got %q %+v", out, res)
		}
	})
}

// A process that escaped and holds the pipe open does not hold the result
// until it ends (two minutes), and what was written before is
// kept. The bound is loose because a busy machine is slow; the point is
// "seconds, not the escaped process's lifetime".
func TestEscapedWriterDoesNotHoldTheResult(t *testing.T) {
	modes(t, func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		t.Cleanup(func() {
			if data, err := os.ReadFile(pidFile); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
		start := time.Now()
		res, out := run(t, Spec{Argv: bash("setsid sleep 120 & echo $! > " + pidFile + "; sleep 0.2; echo before")})
		if took := time.Since(start); took > 60*time.Second {
			t.Errorf("took %v; the escaped sleep held the result", took)
		}
		if out != "before\n" || res.ExitCode != 0 {
			t.Fatalf("got %q %+v", out, res)
		}
	})
}
