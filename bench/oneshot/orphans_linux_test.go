package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With ONESHOT_TEST_BURN=ms the test binary is a process that uses that
// much CPU and exits: the orphan the tests below leave behind.
func TestMain(m *testing.M) {
	if ms, err := strconv.Atoi(os.Getenv("ONESHOT_TEST_BURN")); err == nil {
		for cpuMillis() < float64(ms) {
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func cpuMillis() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// A command whose child outlives it (as bwrap's namespace init outlives
// bwrap) still has that child's CPU counted.
func TestOrphansAreCounted(t *testing.T) {
	if err := adoptOrphans(); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ONESHOT_TEST_BURN", "150")
	// The shell starts the burner in the background and exits at once.
	argv := []string{"sh", "-c", strings.ReplaceAll("'EXE' </dev/null >/dev/null 2>&1 & echo hi", "EXE", exe)}
	cpu, _, _, err := runOnce(argv, "hi", 0)
	if err != nil {
		t.Fatal(err)
	}
	if cpu < 150 {
		t.Fatalf("counted %.1f ms of CPU, want at least the orphan's 150 ms", cpu)
	}
}

// An orphan that does not end is reported, not waited for without end.
func TestOrphanStillRunning(t *testing.T) {
	if err := adoptOrphans(); err != nil {
		t.Fatal(err)
	}
	defer func(l time.Duration) { orphanLimit = l }(orphanLimit)
	orphanLimit = 10 * time.Millisecond
	_, _, _, err := runOnce([]string{"sh", "-c", "sleep 3 </dev/null >/dev/null 2>&1 & echo hi"}, "hi", 0)
	if err == nil || !strings.Contains(err.Error(), "still running") {
		t.Fatalf("runOnce = %v, want an error about a process still running", err)
	}
	if _, _, err := reapOrphans(time.Minute); err != nil {
		t.Fatal(err)
	}
}
