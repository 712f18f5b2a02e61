//go:build unix

package runner

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// directProcess is a command started without a supervisor: its bounds are
// those of its process group.
type directProcess struct {
	proc *os.Process
	out  *os.File
}

func startDirect(spec Spec) (process, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer devnull.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: output pipe: %w", ErrSetup, err)
	}
	defer outW.Close()
	proc, err := os.StartProcess(spec.Argv[0], spec.Argv, &os.ProcAttr{
		Dir:   spec.Dir,
		Env:   nonNilEnv(spec.Env),
		Files: append([]*os.File{devnull, outW, outW}, spec.ExtraFiles...),
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		outR.Close()
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	return &directProcess{proc: proc, out: outR}, nil
}

func (d *directProcess) output() *os.File { return d.out }

func (d *directProcess) wait() wireStatus {
	// After the leader exits, anything left in its group is killed, before
	// the leader is reaped so the group's id cannot have been reused.
	awaitExit(d.proc.Pid)
	killGroup(d.proc.Pid, syscall.SIGKILL)
	ps, err := d.proc.Wait()
	if err != nil {
		return wireStatus{ExitCode: -1, SetupError: err.Error()}
	}
	return statusOf(ps.Sys().(syscall.WaitStatus))
}

func (d *directProcess) terminate(grace time.Duration, stop <-chan struct{}) {
	killGroup(d.proc.Pid, syscall.SIGTERM)
	select {
	case <-stop:
		// The leader is gone; cleanup kills the rest of the group.
	case <-time.After(grace):
		killGroup(d.proc.Pid, syscall.SIGKILL)
	}
}

func (d *directProcess) cleanup() {
	killGroup(d.proc.Pid, syscall.SIGKILL) // for platforms without awaitExit
}

// killGroup signals the process group pgid. Errors are ignored on purpose:
// ESRCH means the group is already gone, which is the goal, and EPERM means
// a member changed credentials, which nothing here can undo.
func killGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}
