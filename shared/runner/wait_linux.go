package runner

import (
	"errors"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until process pid has exited, without reaping it. While
// it is an unreaped zombie its pid, and so its process group's id, cannot
// be reused, so the group can still be killed safely.
func awaitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
