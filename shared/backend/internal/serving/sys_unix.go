//go:build unix

package serving

import (
	"strconv"
	"syscall"
)

// CloseOnExec keeps fd from every process this one starts.
func CloseOnExec(fd int) { syscall.CloseOnExec(fd) }

// pollable returns a descriptor of the pipe at fd, read end, that
// os.NewFile hands to the poller: the pipe opened again through
// /proc/self/fd, non-blocking, so the flag is on a description of this
// process's own and not on one the host or anyone else holds too.
// Anything but a pipe, or a pipe that cannot be reopened, is returned as
// it is, blocking.
func pollable(fd int) int {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return fd
	}
	nfd, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fd
	}
	syscall.Close(fd)
	return nfd
}
