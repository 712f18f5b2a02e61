package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// selfExe is re-executed for the supervisor and the confine helper. Using
// /proc/self/exe rather than a path keeps working when the binary on disk is
// replaced or deleted while the process runs.
const selfExe = "/proc/self/exe"

// File descriptors inherited by the supervisor.
const (
	fdLifeline = 3 // read end; EOF means "kill everything and exit"
	fdSpec     = 4 // wireSpec as JSON
	fdStatus   = 5 // wireStatus as JSON, written once before exit
)

// File descriptors inherited by the confine helper.
const (
	fdConfineSpec = 3 // wireSpec as JSON
	fdConfineErr  = 4 // close-on-exec; a message here means setup failed
)

// backstop is how long Run waits for the supervisor to tear the tree down
// after the grace period before it kills the supervisor's group itself.
const backstop = time.Second

// helperEnv is the environment of the supervisor and the confine helper,
// never of the command. Only GORACE passes, so race-enabled test binaries
// can turn off the race runtime's one-second sleep at exit.
func helperEnv() []string {
	if v, ok := os.LookupEnv("GORACE"); ok {
		return []string{"GORACE=" + v}
	}
	return []string{}
}

func supervisionSupported() bool {
	_, err := os.Stat(selfExe)
	return err == nil
}

type supervisedProcess struct {
	proc      *os.Process
	status    *os.File
	lifeline  *os.File
	closeLine sync.Once
}

func startSupervised(spec Spec, out *os.File) (process, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer devnull.Close()
	pipes, err := newPipes(3)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	lifeR, lifeW := pipes[0][0], pipes[0][1]
	specR, specW := pipes[1][0], pipes[1][1]
	statusR, statusW := pipes[2][0], pipes[2][1]
	proc, err := os.StartProcess(selfExe, []string{selfExe, superviseArg}, &os.ProcAttr{
		Dir:   "/",
		Env:   helperEnv(),
		Files: []*os.File{devnull, out, out, lifeR, specR, statusW},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	lifeR.Close()
	specR.Close()
	statusW.Close()
	if err != nil {
		lifeW.Close()
		specW.Close()
		statusR.Close()
		return nil, fmt.Errorf("%w: start supervisor: %w", ErrSetup, err)
	}
	p := &supervisedProcess{proc: proc, status: statusR, lifeline: lifeW}
	err = json.NewEncoder(specW).Encode(wireSpec{
		Argv: spec.Argv, Env: nonNilEnv(spec.Env), Dir: spec.Dir,
		Confine: spec.Confine, ConfinePayload: spec.ConfinePayload,
	})
	specW.Close()
	if err != nil {
		p.cleanup()
		_, _ = proc.Wait()
		statusR.Close()
		return nil, fmt.Errorf("%w: hand spec to supervisor: %w", ErrSetup, err)
	}
	return p, nil
}

func (p *supervisedProcess) wait() status {
	_, err := p.proc.Wait()
	data, _ := io.ReadAll(p.status)
	p.status.Close()
	var ws wireStatus
	if len(data) == 0 || json.Unmarshal(data, &ws) != nil {
		// The supervisor died before reporting; only the backstop SIGKILL
		// does that, and it kills the command with it.
		if err != nil {
			return status{exitCode: -1, setupErr: err.Error()}
		}
		return status{exitCode: -1, signal: "SIGKILL"}
	}
	return status{exitCode: ws.ExitCode, signal: ws.Signal, setupErr: ws.SetupError}
}

func (p *supervisedProcess) terminate(grace time.Duration, stop <-chan struct{}) {
	killGroup(p.proc.Pid, syscall.SIGTERM)
	select {
	case <-stop:
		return
	case <-time.After(grace):
	}
	p.cutLifeline()
	select {
	case <-stop:
	case <-time.After(backstop):
		killGroup(p.proc.Pid, syscall.SIGKILL)
	}
}

func (p *supervisedProcess) cleanup() {
	p.cutLifeline()
	killGroup(p.proc.Pid, syscall.SIGKILL)
}

func (p *supervisedProcess) cutLifeline() {
	p.closeLine.Do(func() { p.lifeline.Close() })
}

func newPipes(n int) ([][2]*os.File, error) {
	var out [][2]*os.File
	for i := 0; i < n; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range out {
				p[0].Close()
				p[1].Close()
			}
			return nil, err
		}
		out = append(out, [2]*os.File{r, w})
	}
	return out, nil
}

// superviseMain is the supervisor process: it starts the command, reaps
// everything that is re-parented to it, and makes sure the whole tree is
// dead before it reports the command's status and exits.
func superviseMain() int {
	for _, fd := range []int{fdLifeline, fdSpec, fdStatus} {
		syscall.CloseOnExec(fd)
	}
	lifeline := os.NewFile(fdLifeline, "lifeline")
	specF := os.NewFile(fdSpec, "spec")
	statusF := os.NewFile(fdStatus, "status")
	report := func(st wireStatus) int {
		_ = json.NewEncoder(statusF).Encode(st)
		return 0
	}

	var spec wireSpec
	err := json.NewDecoder(specF).Decode(&spec)
	specF.Close()
	if err != nil {
		return report(wireStatus{ExitCode: -1, SetupError: "supervisor: read spec: " + err.Error()})
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return report(wireStatus{ExitCode: -1, SetupError: "supervisor: become subreaper: " + err.Error()})
	}
	// SIGTERM reaches the supervisor together with its process group at the
	// deadline. The supervisor outlives it so it can forward the signal to
	// descendants that left the group, and tear everything down after.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	self := os.Getpid()
	pid, err := startChild(spec)
	if err != nil {
		killTree(self, true)
		return report(wireStatus{ExitCode: -1, SetupError: err.Error()})
	}
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		// The runner cut the lifeline or died: nothing may survive it. The
		// wait loop below then sees the command die and reports it.
		killTree(self, false)
	}()
	go func() {
		for range sigs {
			signalTree(self, syscall.SIGTERM)
		}
	}()

	st := wireStatus{ExitCode: -1}
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			break // ECHILD: nothing left to wait for
		}
		if wpid == pid {
			s := statusOf(ws)
			st = wireStatus{ExitCode: s.exitCode, Signal: s.signal}
			break
		}
	}
	killTree(self, true)
	return report(st)
}

// startChild starts the command, through the confine helper when a confiner
// is named, and returns its pid once it has exec'd.
func startChild(spec wireSpec) (int, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	if spec.Confine == "" {
		pid, err := syscall.ForkExec(spec.Argv[0], spec.Argv, &syscall.ProcAttr{
			Dir:   spec.Dir,
			Env:   spec.Env,
			Files: []uintptr{devnull.Fd(), 1, 2},
		})
		if err != nil {
			return 0, fmt.Errorf("exec %s: %w", spec.Argv[0], err)
		}
		return pid, nil
	}

	pipes, err := newPipes(2)
	if err != nil {
		return 0, err
	}
	specR, specW := pipes[0][0], pipes[0][1]
	errR, errW := pipes[1][0], pipes[1][1]
	defer errR.Close()
	pid, err := syscall.ForkExec(selfExe, []string{selfExe, confineArg}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   helperEnv(),
		Files: []uintptr{devnull.Fd(), 1, 2, specR.Fd(), errW.Fd()},
	})
	specR.Close()
	errW.Close()
	if err != nil {
		specW.Close()
		return 0, fmt.Errorf("start confine helper: %w", err)
	}
	err = json.NewEncoder(specW).Encode(spec)
	specW.Close()
	// The error pipe is close-on-exec in the helper: EOF without data means
	// the command is running; a message means setup failed.
	msg, _ := io.ReadAll(errR)
	if err != nil && len(msg) == 0 {
		msg = []byte("hand spec to confine helper: " + err.Error())
	}
	if len(msg) > 0 {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		return 0, errors.New(string(msg))
	}
	return pid, nil
}

// confineMain is the confine helper: it applies the named confiner to itself
// and execs the command.
func confineMain() int {
	runtime.LockOSThread()
	syscall.CloseOnExec(fdConfineSpec)
	syscall.CloseOnExec(fdConfineErr)
	errF := os.NewFile(fdConfineErr, "confine-error")
	fail := func(err error) int {
		_, _ = errF.WriteString(err.Error())
		return 126
	}
	specF := os.NewFile(fdConfineSpec, "confine-spec")
	var spec wireSpec
	err := json.NewDecoder(specF).Decode(&spec)
	specF.Close()
	if err != nil {
		return fail(fmt.Errorf("confine helper: read spec: %w", err))
	}
	fn := confiner(spec.Confine)
	if fn == nil {
		return fail(fmt.Errorf("confine helper: no confiner named %q in this binary", spec.Confine))
	}
	if spec.Dir != "" {
		if err := os.Chdir(spec.Dir); err != nil {
			return fail(fmt.Errorf("chdir: %w", err))
		}
	}
	if err := fn(spec.ConfinePayload); err != nil {
		return fail(fmt.Errorf("confine (%s): %w", spec.Confine, err))
	}
	// Nothing but stdio may reach the command.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	err = syscall.Exec(spec.Argv[0], spec.Argv, spec.Env)
	return fail(&os.PathError{Op: "exec", Path: spec.Argv[0], Err: err})
}
