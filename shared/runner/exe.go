package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
)

// supervisorExe is a lean supervisor binary a runner starts instead of
// re-executing this program (WithSupervisor, shared.EnvSupervisorFD).
type supervisorExe struct {
	// fd is the runner's own descriptor of the binary, and path names it
	// (/proc/self/fd/N), so the file started is the one that was opened,
	// whatever happens to its name on disk; stat is what it was then.
	fd   int
	path string
	stat supervisorStat
	// name is the binary's own file name when it was opened: the name
	// the supervisor takes (see nameProcess), since the kernel would name
	// it after the descriptor's number.
	name string
	// failed is set once the binary could not be started and this
	// program started in its place: later runs do not try it again.
	failed atomic.Bool
}

// WithSupervisor makes the runner start the executable open in f as each
// command's supervisor instead of re-executing this program, which is
// what a runner does without it. The binary is a lean one whose main is
// SupervisorMain with the same confiners under the same names: a plugin
// that links gRPC, protobuf and the rest costs several times as much to
// start, once per run. The runner keeps a descriptor of its own (f may be
// closed afterwards). A file that is not a regular executable is ignored,
// and should the binary fail to start, the runner re-executes this program
// instead, for that run and the ones after it. A plugin built with the Go
// SDK gets its host's binary this way without asking (shared.EnvSupervisorFD).
func WithSupervisor(f *os.File) Option {
	e, err := openSupervisor(int(f.Fd()))
	return func(r *Runner) {
		if err == nil {
			r.exe = e
		}
	}
}

// SupervisorMain is the main function of a lean supervisor binary (see
// WithSupervisor): it makes this process the supervisor, confine helper or
// limits step it was started as, with opts' confiners, and exits. It never
// returns. Started any other way (by hand), it says what it is and exits
// with status 2.
func SupervisorMain(opts ...Option) {
	New(opts...) // does the job and exits, if argv names one of opts' confiners
	name := "skillhost supervisor"
	if exe, err := os.Executable(); err == nil {
		name = filepath.Base(exe)
	}
	if len(os.Args) >= 3 && (os.Args[1] == superviseArg || os.Args[1] == confineArg) {
		fmt.Fprintf(os.Stderr, "%s: no confiner named %q in this supervisor binary: it must be built with the same confiners as the plugin that starts it\n", name, os.Args[2])
		os.Exit(126)
	}
	fmt.Fprintf(os.Stderr, "%s: a sandbox plugin's run supervisor; the plugin starts it for each run, it is not run by hand\n", name)
	os.Exit(2)
}
