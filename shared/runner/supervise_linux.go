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

// supervisedProcess is a supervisor, started ahead of time or on demand.
type supervisedProcess struct {
	proc      *os.Process
	out       *os.File // read end of the merged output
	spec      *os.File // write end; closed once the spec is sent
	status    *os.File
	lifeline  *os.File
	closeLine sync.Once
}

// Starting a supervisor (and a confine helper) means exec'ing this binary,
// which costs milliseconds of runtime and package initialisation. So one
// supervisor of each kind is kept started and waiting for its command;
// Run takes it and starts a replacement in the background.
var warm struct {
	sync.Mutex
	ready map[string]*supervisedProcess // by confiner name, "" for none
	busy  map[string]bool               // a replacement is being started
}

func startSupervised(spec Spec) (process, error) {
	for attempt := 0; attempt < 2; attempt++ {
		p := takeWarm(spec.Confine)
		if p == nil {
			var err error
			if p, err = prestart(spec.Confine); err != nil {
				return nil, err
			}
		}
		if keepSpares() {
			go refill(spec.Confine)
		}
		if err := p.send(spec); err != nil {
			// A warm supervisor that died while waiting; start afresh.
			p.cleanup()
			killGroup(p.proc.Pid, syscall.SIGKILL)
			_, _ = p.proc.Wait()
			p.out.Close()
			p.status.Close()
			if attempt == 0 {
				continue
			}
			return nil, fmt.Errorf("%w: hand spec to supervisor: %w", ErrSetup, err)
		}
		return p, nil
	}
	panic("unreachable")
}

func takeWarm(confine string) *supervisedProcess {
	warm.Lock()
	defer warm.Unlock()
	p := warm.ready[confine]
	delete(warm.ready, confine)
	return p
}

func refill(confine string) {
	warm.Lock()
	if warm.busy[confine] || warm.ready[confine] != nil {
		warm.Unlock()
		return
	}
	if warm.busy == nil {
		warm.busy = map[string]bool{}
		warm.ready = map[string]*supervisedProcess{}
	}
	warm.busy[confine] = true
	warm.Unlock()

	p, err := prestart(confine)

	warm.Lock()
	defer warm.Unlock()
	warm.busy[confine] = false
	if err == nil {
		warm.ready[confine] = p
	}
}

// prestart starts a supervisor that waits for its spec, with a confine
// helper for confine already started if it is not "".
func prestart(confine string) (*supervisedProcess, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer devnull.Close()
	pipes, err := newPipes(4)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	outR, outW := pipes[0][0], pipes[0][1]
	lifeR, lifeW := pipes[1][0], pipes[1][1]
	specR, specW := pipes[2][0], pipes[2][1]
	statusR, statusW := pipes[3][0], pipes[3][1]
	argv := []string{selfExe, superviseArg}
	if confine != "" {
		argv = append(argv, confine)
	}
	proc, err := os.StartProcess(selfExe, argv, &os.ProcAttr{
		Dir:   "/",
		Env:   helperEnv(),
		Files: []*os.File{devnull, outW, outW, lifeR, specR, statusW},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	for _, f := range []*os.File{outW, lifeR, specR, statusW} {
		f.Close()
	}
	if err != nil {
		for _, f := range []*os.File{outR, lifeW, specW, statusR} {
			f.Close()
		}
		return nil, fmt.Errorf("%w: start supervisor: %w", ErrSetup, err)
	}
	return &supervisedProcess{proc: proc, out: outR, spec: specW, status: statusR, lifeline: lifeW}, nil
}

// send hands the command to a waiting supervisor.
func (p *supervisedProcess) send(spec Spec) error {
	err := json.NewEncoder(p.spec).Encode(wireSpec{
		Argv: spec.Argv, Env: nonNilEnv(spec.Env), Dir: spec.Dir,
		Confine: spec.Confine, ConfinePayload: spec.ConfinePayload,
	})
	if cerr := p.spec.Close(); err == nil {
		err = cerr
	}
	return err
}

func (p *supervisedProcess) output() *os.File { return p.out }

func (p *supervisedProcess) wait() status {
	// The supervisor has killed its tree before exiting; anything still in
	// its group goes too, before it is reaped so the id cannot be reused.
	awaitExit(p.proc.Pid)
	killGroup(p.proc.Pid, syscall.SIGKILL)
	_, err := p.proc.Wait()
	data, _ := io.ReadAll(p.status)
	p.status.Close()
	var ws wireStatus
	if len(data) == 0 || json.Unmarshal(data, &ws) != nil {
		// The supervisor ended before reporting: the cut lifeline or the
		// backstop SIGKILL, each of which kills the command with it.
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

// superviseMain is the supervisor process: it waits for its command, starts
// it, reaps everything that is re-parented to it, and makes sure the whole
// tree is dead before it reports the command's status and exits.
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
	self := os.Getpid()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return report(wireStatus{ExitCode: -1, SetupError: "supervisor: become subreaper: " + err.Error()})
	}
	// SIGTERM reaches the supervisor together with its process group at the
	// deadline. The supervisor outlives it so it can forward the signal to
	// descendants that left the group, and tear everything down after.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		// The runner cut the lifeline (the grace after SIGTERM is over) or
		// died: nothing may survive it. No status is written; the runner
		// reports the command as killed (see wait).
		killTree(self, false)
		os.Exit(0)
	}()
	var h *helper
	if len(os.Args) > 2 {
		h, _ = startHelper(os.Args[2]) // on failure the spec's confine step retries
	}

	var spec wireSpec
	err := json.NewDecoder(specF).Decode(&spec)
	specF.Close()
	if err != nil {
		killTree(self, true)
		return report(wireStatus{ExitCode: -1, SetupError: "supervisor: read spec: " + err.Error()})
	}
	go func() {
		for range sigs {
			signalTree(self, syscall.SIGTERM)
		}
	}()
	pid, err := startChild(spec, h)
	if err != nil {
		killTree(self, true)
		return report(wireStatus{ExitCode: -1, SetupError: err.Error()})
	}

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

// helper is a started confine helper waiting for its spec.
type helper struct {
	pid   int
	spec  *os.File // write end
	error *os.File // read end
}

func startHelper(confine string) (*helper, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	pipes, err := newPipes(2)
	if err != nil {
		return nil, err
	}
	specR, specW := pipes[0][0], pipes[0][1]
	errR, errW := pipes[1][0], pipes[1][1]
	pid, err := syscall.ForkExec(selfExe, []string{selfExe, confineArg, confine}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   helperEnv(),
		Files: []uintptr{devnull.Fd(), 1, 2, specR.Fd(), errW.Fd()},
	})
	specR.Close()
	errW.Close()
	if err != nil {
		specW.Close()
		errR.Close()
		return nil, fmt.Errorf("start confine helper: %w", err)
	}
	return &helper{pid: pid, spec: specW, error: errR}, nil
}

// startChild starts the command, through the confine helper when a confiner
// is named, and returns its pid once it has exec'd.
func startChild(spec wireSpec, h *helper) (int, error) {
	if spec.Confine == "" {
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			return 0, err
		}
		defer devnull.Close()
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
	if h == nil {
		var err error
		if h, err = startHelper(spec.Confine); err != nil {
			return 0, err
		}
	}
	defer h.error.Close()
	err := json.NewEncoder(h.spec).Encode(spec)
	h.spec.Close()
	// The error pipe is close-on-exec in the helper: EOF without data means
	// the command is running; a message means setup failed.
	msg, _ := io.ReadAll(h.error)
	if err != nil && len(msg) == 0 {
		msg = []byte("hand spec to confine helper: " + err.Error())
	}
	if len(msg) > 0 {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(h.pid, &ws, 0, nil)
		return 0, errors.New(string(msg))
	}
	return h.pid, nil
}

// confineMain is the confine helper: it waits for its command, applies the
// named confiner to itself and execs the command.
func confineMain() int {
	runtime.LockOSThread()
	syscall.CloseOnExec(fdConfineSpec)
	syscall.CloseOnExec(fdConfineErr)
	if len(os.Args) > 2 {
		if prepare := preparer(os.Args[2]); prepare != nil {
			prepare()
		}
	}
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
