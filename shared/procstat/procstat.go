// Package procstat reads a process's line in /proc/<pid>/stat: its parent,
// its state, its thread count and the CPU time it and its reaped children
// used. It is the one reader of that file in the project, with one rule
// for what counts as alive. Elsewhere than Linux it reports every process as unknown.
package procstat

import (
	"errors"
	"time"
)

// Stat is what a /proc/<pid>/stat line says of a process.
type Stat struct {
	PPid int
	// State is the state letter of the process's first thread: R, S, D,
	// Z (zombie), X (dead), ...
	State byte
	// Threads counts the process's threads not yet released, the first
	// one included.
	Threads int
	// CPU is user and system time of the process and of the children it
	// waited for.
	CPU time.Duration
}

// Gone reports whether the process has ended: its first thread is a zombie
// (or dead) and no other thread is left. The state letter alone does not
// say so. A first thread that ended on its own (the exit system call, not
// exit_group) shows as a zombie while the other threads run on, with an
// empty command line; and during exit_group the first thread can turn
// zombie before the others have closed the process's files. Either way the
// process still runs, and a signal to its pid still reaches it.
func (s Stat) Gone() bool { return (s.State == 'Z' || s.State == 'X') && s.Threads <= 1 }

// ErrMalformed is a stat line that could not be read.
var ErrMalformed = errors.New("malformed /proc stat line")

// Alive reports whether pid is a process that has not ended: it exists and
// is not Gone.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	st, err := Read(pid)
	return err == nil && !st.Gone()
}
