package runner

import (
	"encoding/gob"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// superviseInit is the supervisor of a confiner that asked for isolation
// when the kernel gave it its namespaces: it is the init of its own PID
// namespace (and mount namespace, and user namespace unless root), so it
// confines and starts the command itself instead of re-executing this
// binary once more as a confine helper. A PID namespace holds everything
// the command starts, and its init's death kills all of it in the kernel,
// so this supervisor needs neither a subreaper nor walks of /proc (which,
// from inside, would name the host's processes): kill(-1) reaches exactly
// the namespace.
func superviseInit(lifeline, specF, statusF *os.File) int {
	report := func(st wireStatus) int {
		st.Isolated = true
		_ = json.NewEncoder(statusF).Encode(st)
		return 0
	}
	// Nothing the command does may read this process's memory or
	// descriptors through /proc.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		// The runner cut the lifeline or died: init's exit ends the
		// namespace; no status is written (see wait).
		_ = syscall.Kill(-1, syscall.SIGKILL)
		os.Exit(0)
	}()
	forwardTerm(&terminating)

	var spec wireSpec
	err := gob.NewDecoder(specF).Decode(&spec)
	specF.Close()
	if err != nil {
		return report(wireStatus{ExitCode: -1, SetupError: "supervisor: read spec: " + err.Error()})
	}
	if spec.Confine != os.Args[2] {
		return report(wireStatus{ExitCode: -1, SetupError: fmt.Sprintf("supervisor: started for confiner %q, asked for %q", os.Args[2], spec.Confine)})
	}
	fn := confiner(spec.Confine)
	if fn == nil {
		return report(wireStatus{ExitCode: -1, SetupError: fmt.Sprintf("supervisor: no confiner named %q in this binary", spec.Confine)})
	}
	pid, err := forkConfined(fn, spec)
	if err != nil {
		reapNamespace(-1)
		if terminating.Load() {
			// The deadline (or the caller) ended the run while it was
			// being set up: a killed run, not a failure to start.
			return report(wireStatus{ExitCode: -1, Signal: "SIGKILL"})
		}
		return report(wireStatus{ExitCode: -1, SetupError: err.Error()})
	}
	st := reapNamespace(pid)
	return report(wireStatus{ExitCode: st.exitCode, Signal: st.signal})
}
