// Package procstat reads a process's line in /proc/<pid>/stat: its parent,
// its state and the CPU time it and its reaped children used. It is the one
// reader of that file in the project, with one rule for what counts as
// alive. Elsewhere than Linux it reports every process as unknown.
package procstat

import (
	"errors"
	"time"
)

// Stat is what a /proc/<pid>/stat line says of a process.
type Stat struct {
	PPid int
	// State is the state letter: R, S, D, Z (zombie), X (dead), ...
	State byte
	// CPU is user and system time of the process and of the children it
	// waited for.
	CPU time.Duration
}

// Gone reports whether the state means the process has ended: a zombie
// waiting to be reaped has.
func (s Stat) Gone() bool { return s.State == 'Z' || s.State == 'X' }

// ErrMalformed is a stat line that could not be read.
var ErrMalformed = errors.New("malformed /proc stat line")

// Alive reports whether pid is a process that has not ended: it exists and
// is not a zombie.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	st, err := Read(pid)
	return err == nil && !st.Gone()
}
