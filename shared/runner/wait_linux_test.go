package runner

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// awaitExit returns once the child has exited, not before, and leaves it
// for Wait to reap; it waits in the poller where the kernel has pidfds.
func TestAwaitExitLeavesTheChildUnreaped(t *testing.T) {
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		t.Skipf("no pidfds here (%v): awaitExit blocks in waitid", err)
	} else {
		unix.Close(fd)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "read x; exit 3")
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	polled := make(chan bool, 1)
	go func() { polled <- pollExit(cmd.Process.Pid) }()
	select {
	case <-polled:
		t.Fatal("pollExit returned while the child was still waiting for its input")
	case <-time.After(200 * time.Millisecond):
	}
	w.Close() // the child reads EOF and exits
	select {
	case ok := <-polled:
		if !ok {
			t.Fatal("pollExit could not wait on the pidfd")
		}
	case <-time.After(time.Minute):
		t.Fatal("pollExit did not return after the child exited")
	}
	if !hasExited(cmd.Process.Pid) {
		t.Error("hasExited: false after the child exited")
	}
	awaitExit(cmd.Process.Pid) // returns at once for an exited child
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("Wait = %v; want exit status 3 (the child left unreaped until now)", err)
	}
}
