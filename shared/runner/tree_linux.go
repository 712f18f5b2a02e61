package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/procstat"
)

// killTree kills every descendant of root until none is left alive. Each
// round kills all processes that exist at the start of the round, so even a
// fork bomb runs out of live parents. With reapChildren it also collects
// root's exited children; only the one goroutine that owns waiting may ask
// for that, or it would steal the command's exit status.
func killTree(root int, reapChildren bool) {
	for round := 0; round < 1000; round++ {
		if reapChildren {
			reap()
		}
		if none, ok := childless(root); ok && none {
			return // the common case, answered without walking /proc
		}
		pids, err := descendants(root)
		if err != nil {
			// /proc is unreadable (a lowered RLIMIT_NOFILE, say): restore
			// what is needed to look and try again rather than give up.
			_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 1024, Max: 1024})
			time.Sleep(time.Millisecond)
			continue
		}
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if round > 10 {
			time.Sleep(time.Millisecond)
		}
	}
}

// childless reports whether root has no child processes left, from
// /proc/<root>/task/*/children; ok is false where the kernel lacks those
// files. Orphaned descendants are re-parented to root (a subreaper), so no
// children means no descendants at all.
//
// The calling process asks waitid instead. Looking itself up in /proc
// would leave dentries under /proc/<pid> that the kernel has to invalidate
// when the process is reaped, which on a machine busy starting and ending
// processes costs its parent tens of milliseconds of contended locks.
func childless(root int) (none, ok bool) {
	if root == os.Getpid() {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		for errors.Is(err, unix.EINTR) {
			err = unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		}
		return errors.Is(err, unix.ECHILD), err == nil || errors.Is(err, unix.ECHILD)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", root))
	if err != nil {
		return false, false
	}
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", root, t.Name()))
		if err != nil {
			return false, false
		}
		if len(bytes.TrimSpace(data)) > 0 {
			return false, true
		}
	}
	return true, true
}

// signalTree sends sig to every live descendant of root below its first
// skip generations (0: all of them) and says how many it signalled.
func signalTree(root int, sig syscall.Signal, skip int) int {
	pids, depths, parents, _ := descendantsDepth(root)
	n := 0
	for i, pid := range pids {
		if depths[i] > skip && signalChild(pid, parents[i], sig) {
			n++
		}
	}
	return n
}

// signalChild sends sig to pid if it is still the child of parent that the
// walk of /proc found: through a pidfd, taken before the parent is checked
// again, so a pid that was reaped and given to another process meanwhile is
// not signalled. Without pidfds it signals the pid.
func signalChild(pid, parent int, sig syscall.Signal) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return !errors.Is(err, unix.ESRCH) && syscall.Kill(pid, sig) == nil
	}
	defer unix.Close(fd)
	if st, err := procstat.Read(pid); err != nil || st.PPid != parent {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// termBelow sends SIGTERM below the first skip generations of root's
// descendants. A deadline can fall while the spared wrapper is still
// starting the command, and the command would then run untouched until the
// grace ran out: so with generations to spare it looks again until it
// signalled something or done is closed, first every few milliseconds,
// then (each look walks /proc) at most every 100.
func termBelow(root, skip int, done <-chan struct{}) {
	pause := 2 * time.Millisecond
	for signalTree(root, syscall.SIGTERM, skip) == 0 && skip > 0 {
		select {
		case <-done:
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// descendants lists the live descendants of root by walking the parent
// links of every process in /proc. A process whose first thread ended
// while others run on looks like a zombie but is live, and so are its
// children (see procstat.Stat.Gone).
func descendants(root int) ([]int, error) {
	pids, _, _, err := descendantsDepth(root)
	return pids, err
}

// descendantsDepth is descendants with each one's generation below root
// (1 for a child) and parent.
func descendantsDepth(root int) (pids, depths, parents []int, err error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil, nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if vanished(err) || err == nil && st.Gone() {
			continue // gone meanwhile, or ended
		}
		if err != nil {
			return nil, nil, nil, err
		}
		children[st.PPid] = append(children[st.PPid], pid)
	}
	queue, level := []int{root}, []int{0}
	for len(queue) > 0 {
		p, d := queue[0], level[0]
		queue, level = queue[1:], level[1:]
		for _, c := range children[p] {
			pids, depths, parents = append(pids, c), append(depths, d+1), append(parents, p)
			queue, level = append(queue, c), append(level, d+1)
		}
	}
	return pids, depths, parents, nil
}

// Gone reports whether no process pid runs any more: there is none, or it
// has ended (procstat.Stat.Gone), which leaves its cgroups and runs
// nothing.
func Gone(pid int) bool {
	st, err := procstat.Read(pid)
	return vanished(err) || err == nil && st.Gone()
}

// vanished reports whether err from reading /proc/<pid> means the process
// is gone: ENOENT when it was reaped before the open, ESRCH when it was
// reaped between the open and the read. A tree that churns processes makes
// the second common, and treating it as a failure to look would let a fork
// bomb keep every walk from finishing.
func vanished(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}
