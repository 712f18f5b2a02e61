package runner

import "sync/atomic"

// noSpares turns off the spare supervisor (and confine helper) that Run
// otherwise starts after each command for the next one.
var noSpares atomic.Bool

// KeepSpares sets whether Run keeps a supervisor started ahead of time for
// the next command (the default). A process that will run one command and
// exit, as a plugin serving a one-shot `skillhost run` does, turns it off:
// the spare would cost as much as the command's own supervisor and never
// be used. Turning it off also stops the spares already waiting and undoes
// what their confiner's Preparer did, so a process about to exit calls it
// to leave nothing behind.
func KeepSpares(keep bool) {
	noSpares.Store(!keep)
	if !keep {
		dropSpares()
	}
}

func keepSpares() bool { return !noSpares.Load() }
