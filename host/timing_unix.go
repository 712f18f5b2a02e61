//go:build unix

package host

import (
	"syscall"
	"time"
)

// processCPU returns the user and system time of this process (self) or of
// its children that were waited for (!self), and whether it could tell.
func processCPU(self bool) (time.Duration, bool) {
	who := syscall.RUSAGE_SELF
	if !self {
		who = syscall.RUSAGE_CHILDREN
	}
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
