//go:build linux

package serving

import (
	"os"
	"syscall"
	"testing"
)

// pollable gives this process a non-blocking description of the pipe's
// read end of its own and leaves the one it was handed (which the host
// may share) blocking; a file that is no pipe comes back as it was.
func TestPollableLeavesTheSharedDescriptionBlocking(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	shared, err := syscall.Dup(int(r.Fd())) // Fd makes it blocking
	if err != nil {
		t.Fatal(err)
	}
	other, _ := syscall.Dup(shared) // the host's copy: same description
	defer syscall.Close(other)
	got := pollable(shared)
	if got == shared {
		t.Fatal("the pipe was not reopened")
	}
	defer syscall.Close(got)
	if fl := flags(t, got); fl&syscall.O_NONBLOCK == 0 {
		t.Errorf("the new descriptor blocks (flags %#x)", fl)
	}
	if fl := flags(t, other); fl&syscall.O_NONBLOCK != 0 {
		t.Error("the shared description became non-blocking")
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if n, err := syscall.Read(got, buf); n != 1 || err != nil || buf[0] != 'x' {
		t.Errorf("read %d %q, %v through the new descriptor; want the pipe's byte", n, buf[:max(n, 0)], err)
	}
	f, err := os.CreateTemp(t.TempDir(), "plain")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fd := int(f.Fd()); pollable(fd) != fd {
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
