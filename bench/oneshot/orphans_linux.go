package main

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// adoptOrphans makes this process the reaper of every orphan below it, so
// that a command whose own processes exit before their children (bwrap's
// outer process does not wait for the namespace's init once the command
// has reported its status) still has all of its CPU counted.
func adoptOrphans() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become a subreaper: %w", err)
	}
	return nil
}

const orphansCounted = true

// reapOrphans waits for every child left after the command itself was
// waited for (orphans of its tree, reparented here) and returns their CPU
// in milliseconds and the largest peak RSS among them in MiB. An orphan
// still running after limit is an error: a case that leaves a process
// behind would have it counted in the next case.
func reapOrphans(limit time.Duration) (cpu, rss float64, err error) {
	deadline := time.Now().Add(limit)
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, &ru)
		switch {
		case errors.Is(err, syscall.ECHILD):
			return cpu, rss, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return cpu, rss, fmt.Errorf("wait for orphans: %w", err)
		case pid > 0:
			cpu += float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
			rss = max(rss, float64(ru.Maxrss)/1024)
			continue
		}
		if time.Now().After(deadline) {
			return cpu, rss, fmt.Errorf("a process of the case was still running %v after the command exited", limit)
		}
		time.Sleep(time.Millisecond)
	}
}
