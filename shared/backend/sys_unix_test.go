//go:build linux

package backend

import (
	"os"
	"syscall"
	"testing"
)

// pollable gives this process a non-blocking description of a pipe of its
// own and leaves the one it was handed (which the host may share) blocking;
// a file that is no pipe comes back as it was.
func TestPollableLeavesTheSharedDescriptionBlocking(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, end := range []struct {
		f     *os.File
		write bool
	}{{r, false}, {w, true}} {
		shared, err := syscall.Dup(int(end.f.Fd())) // Fd makes it blocking
		if err != nil {
			t.Fatal(err)
		}
		other, _ := syscall.Dup(shared) // the host's copy: same description
		got := pollable(shared, end.write)
		if got == shared {
			t.Fatalf("write=%v: the pipe was not reopened", end.write)
		}
		if fl := flags(t, got); fl&syscall.O_NONBLOCK == 0 {
			t.Errorf("write=%v: the new descriptor blocks (flags %#x)", end.write, fl)
		}
		if fl := flags(t, other); fl&syscall.O_NONBLOCK != 0 {
			t.Errorf("write=%v: the shared description became non-blocking", end.write)
		}
		syscall.Close(got)
		syscall.Close(other)
	}
	f, err := os.CreateTemp(t.TempDir(), "plain")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fd := int(f.Fd()); pollable(fd, false) != fd {
		t.Error("a regular file was reopened")
	}
}

func flags(t *testing.T, fd int) int {
	t.Helper()
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return int(fl)
}
