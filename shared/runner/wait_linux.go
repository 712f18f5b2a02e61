package runner

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until process pid, a child of this process, has exited,
// without reaping it. While it is an unreaped zombie its pid, and so its
// process group's id, cannot be reused, so the group can still be killed
// safely.
//
// The wait is in Go's poller, on a pidfd (Linux 5.3), where the kernel has
// them: a goroutine blocked in waitid holds its P in a system call, and
// while another P is idle the runtime's monitor thread polls every 20 µs
// for the first stretch of the wait (about 50 times before it backs off),
// which cost a warm call more CPU than the wait itself. Without pidfds it
// blocks in waitid.
func awaitExit(pid int) {
	if !pollExit(pid) {
		peekExit(pid, 0)
	}
}

// pollExit waits for pid's pidfd to turn readable, which it does when the
// process exits, and reports whether it could wait that way.
func pollExit(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return false
	}
	// Non-blocking, so the file is registered with the poller.
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	exited := false
	err = rc.Read(func(uintptr) bool {
		exited = hasExited(pid)
		return exited
	})
	return err == nil && exited
}

// hasExited reports whether child pid has exited (or cannot be waited
// for), leaving it unreaped.
func hasExited(pid int) bool { return peekExit(pid, unix.WNOHANG) }

// peekExit waits for child pid's exit with waitid and the given options,
// without reaping it, and reports whether it has exited or cannot be
// waited for.
func peekExit(pid, options int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|options, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return true // not a child to wait for: nothing to wait out
		}
		// With WNOHANG and nothing to report, Linux leaves si_signo 0.
		return info.Signo != 0
	}
}
