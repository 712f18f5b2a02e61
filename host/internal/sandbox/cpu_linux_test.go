package sandbox

import (
	"syscall"
	"time"

	"github.com/skillhost/skillhost/shared/procstat"
)

// cpuTime is the CPU time (user and system) used so far by this process,
// the children it reaped, and the given live processes with the children
// they reaped. Differences of it measure what a call costs every process
// taking part, not just the caller.
func cpuTime(pids ...int) time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	total := tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
	for _, pid := range pids {
		if st, err := procstat.Read(pid); err == nil {
			total += st.CPU
		}
	}
	return total
}
