package pluginclient

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/procstat"
)

// exitWatch tells whether the plugin process still runs from a pidfd,
// which turns readable once the process has exited: one poll on every call
// a host makes, where reading /proc/<pid>/stat took an open, the kernel
// formatting the line, a read and a close. Where pidfds are missing
// (kernels before 5.3) it reads /proc.
type exitWatch struct {
	mu    sync.Mutex
	fd    int
	state watchState
}

type watchState uint8

const (
	watchUnopened watchState = iota // not started: reads /proc
	watchOpen
	watchProc // no pidfd, or closed: read /proc
)

// open takes a pidfd of the plugin, pid, once it started and before
// anything can reap it, so the pidfd names the plugin and no later process
// given its pid.
func (w *exitWatch) open(pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != watchUnopened {
		return
	}
	w.state = watchProc
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		w.fd, w.state = fd, watchOpen
	}
}

// alive reports whether pid is a running process: not gone, and not a
// zombie waiting to be reaped with no thread left (a pidfd turns readable
// only then; procstat.Stat.Gone is the same rule from /proc).
func (w *exitWatch) alive(pid int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != watchOpen {
		return procstat.Alive(pid)
	}
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return procstat.Alive(pid)
		}
		return n == 0
	}
}

// close releases the pidfd; later calls read /proc.
func (w *exitWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == watchOpen {
		unix.Close(w.fd)
	}
	w.state = watchProc
}
