package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
)

// nameProcess names this process after argv0's file name, as ps and top
// show it: started through /proc/self/exe or /proc/self/fd/N, it would be
// "exe" or "100". Only the first 15 bytes are kept, by the kernel. The
// file is /proc/self's, the process's first thread, whichever thread
// writes; it is written with plain system calls, since an os.File would
// first try to add it to the poller.
func nameProcess(argv0 string) {
	name := filepath.Base(argv0)
	if name == "" || name == "." || name == "/" {
		return
	}
	fd, err := unix.Open("/proc/self/comm", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	_, _ = unix.Write(fd, []byte(name))
	unix.Close(fd)
}

// selfExe is re-executed for the supervisor and the confine helper. Using
// /proc/self/exe rather than a path keeps working when the binary on disk is
// replaced or deleted while the process runs.
const selfExe = "/proc/self/exe"

// File descriptors inherited by the supervisor.
const (
	fdLifeline = 3 // read end; EOF means "kill everything and exit"
	fdSpec     = 4 // wireSpec, one frame (readWireSpec)
	fdStatus   = 5 // wireStatus frames, the last written before exit
	fdExtra    = 6 // Spec.ExtraFiles, for the command
)

// File descriptors inherited by the confine helper.
const (
	fdConfineSpec = 3 // wireSpec, one frame (readWireSpec)
	fdConfineErr  = 4 // close-on-exec; a message here means setup failed
)

// backstop is how long Run waits for the supervisor to tear the tree down
// after the grace period before it kills the supervisor's group itself.
const backstop = time.Second

// helperEnv is the environment of the supervisor and the confine helper,
// never of the command. Of the caller's, only GORACE passes (race-enabled
// test binaries turn off the race runtime's one-second sleep at exit) and
// EnvNoNamespaces.
//
// Both run on one P (GOMAXPROCS=1): they do one thing at a time and spend
// the run blocked in a system call (wait4, a read). While one P is held in
// a system call and another is idle, Go's monitor thread polls every
// 20 µs for the first stretch of the call (it backs off after about 50
// polls, and takes the P back only after 10 ms); with one P it takes the
// P back at its first poll and sleeps. That was about 65 wake-ups per run
// and 0.3–0.4 ms of CPU per warm call here (docs/performance.md).
func helperEnv() []string {
	env := []string{"GOMAXPROCS=1"}
	for _, name := range []string{"GORACE", EnvNoNamespaces} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// EnvNoNamespaces, set to 1 in the environment of a process that calls Run
// (a plugin), starts confine helpers without namespaces, as on a kernel that
// refuses them: for tests of that fallback, and for hosts where creating
// namespaces is forbidden and noisy.
const EnvNoNamespaces = "SKILLHOST_RUNNER_NO_NAMESPACES"

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

	// initFD is a pidfd of an isolated helper (the PID namespace's init),
	// -1 until the supervisor names it; final is the supervisor's status,
	// closed once read.
	initMu sync.Mutex
	initFD int
	final  chan wireStatus

	// reapMu is held while the supervisor is reaped, so the backstop never
	// walks the tree of a pid that may have been reused.
	reapMu sync.Mutex
	reaped bool

	// isolated says the supervisor is the init of its own namespaces;
	// isolationErr says why one that asked for them was started without;
	// release undoes the confiner's Preparer for an isolated one (nil
	// otherwise).
	isolated     bool
	isolationErr string
	release      func()

	// termOnlySupervisor sends the deadline's SIGTERM to the supervisor
	// alone, which passes it on below the wrapper (Spec.TermBelow).
	termOnlySupervisor bool
}

// readStatus reads the supervisor's status pipe: an init notice, if any,
// then the final status (or nothing, if the supervisor was killed).
func (p *supervisedProcess) readStatus() {
	for {
		ws, err := readWireStatus(p.status)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				// The supervisor said something this runner cannot read
				// (another build's status): say so, not that the run was
				// killed, as a supervisor that ended without a word was.
				p.final <- wireStatus{ExitCode: -1, SetupError: "supervisor status: " + err.Error()}
			}
			close(p.final)
			return
		}
		if ws.InitPid > 0 { // the init notice; the final status never names it
			if fd, err := unix.PidfdOpen(ws.InitPid, 0); err == nil {
				p.initMu.Lock()
				p.initFD = fd
				p.initMu.Unlock()
			}
			continue
		}
		p.final <- ws
		close(p.final)
		return
	}
}

// killInit kills the isolated helper through its pidfd, which cannot name a
// reused pid: the kernel then kills everything in its namespace.
func (p *supervisedProcess) killInit() {
	p.initMu.Lock()
	defer p.initMu.Unlock()
	if p.initFD >= 0 {
		_ = unix.PidfdSendSignal(p.initFD, unix.SIGKILL, nil, 0)
	}
}

func (p *supervisedProcess) closeInit() {
	p.initMu.Lock()
	defer p.initMu.Unlock()
	if p.initFD >= 0 {
		unix.Close(p.initFD)
		p.initFD = -1
	}
}

// Starting a supervisor (and a confine helper) means exec'ing this binary,
// which costs milliseconds of runtime and package initialisation. So one
// supervisor of each kind is kept started and waiting for its command;
// Run takes it and starts a replacement in the background.
type pool struct {
	sync.Mutex
	ready map[string]*supervisedProcess // by confiner name, "" for none
	busy  map[string]bool               // a replacement is being started
}

func (r *Runner) startSupervised(spec Spec) (process, error) {
	for attempt := 0; attempt < 2; attempt++ {
		var p *supervisedProcess
		if len(spec.ExtraFiles) == 0 {
			p = r.spares.take(spec.Confine)
		}
		if p == nil {
			// A command's extra descriptors pass through a supervisor
			// started with them.
			var err error
			if p, err = r.prestart(spec.Confine, spec.ExtraFiles...); err != nil {
				return nil, err
			}
		}
		p.termOnlySupervisor = spec.TermBelow > 0
		// A wrapper's run takes no spare (its descriptors must be there
		// from the start), so it leaves none to replace.
		if r.keepSpares() && len(spec.ExtraFiles) == 0 {
			go r.refill(spec.Confine)
		}
		if err := p.send(spec); err != nil {
			// A warm supervisor that died while waiting; start afresh.
			p.cleanup()
			killGroup(p.proc.Pid, syscall.SIGKILL)
			_, _ = p.proc.Wait()
			p.out.Close()
			p.status.Close()
			p.closeInit()
			p.releasePrepared()
			if attempt == 0 {
				continue
			}
			return nil, fmt.Errorf("%w: hand spec to supervisor: %w", ErrSetup, err)
		}
		return p, nil
	}
	panic("unreachable")
}

func (warm *pool) take(confine string) *supervisedProcess {
	warm.Lock()
	defer warm.Unlock()
	p := warm.ready[confine]
	delete(warm.ready, confine)
	return p
}

func (r *Runner) refill(confine string) {
	warm := &r.spares
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

	p, err := r.prestart(confine)

	warm.Lock()
	warm.busy[confine] = false
	if err == nil && r.keepSpares() {
		warm.ready[confine] = p
		p = nil
	}
	warm.Unlock()
	if err == nil && p != nil {
		p.discard() // spares were turned off meanwhile
	}
}

// drop stops the supervisors waiting for a next command.
func (warm *pool) drop() {
	warm.Lock()
	spares := warm.ready
	warm.ready = map[string]*supervisedProcess{}
	warm.Unlock()
	for _, p := range spares {
		p.discard()
	}
}

// discard stops a supervisor that never got a command: the cut lifeline
// ends it and its helper or namespace (a supervisor with a helper releases
// what it prepared for it first), then what was prepared for an isolated
// one is released here.
func (p *supervisedProcess) discard() {
	p.cutLifeline()
	p.spec.Close()
	_, _ = p.proc.Wait()
	p.out.Close()
	p.status.Close()
	p.closeInit()
	p.releasePrepared()
}

// prestart starts a supervisor that waits for its spec. For a confiner
// that asked for isolation the supervisor is started in new namespaces as
// their init and confines and starts the command itself (superviseInit):
// one process fewer than a supervisor with a confine helper, which is what
// it falls back to where the kernel refuses namespaces; such a helper is
// started right away if confine is not "".
func (r *Runner) prestart(confine string, extra ...*os.File) (*supervisedProcess, error) {
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
	attr := &os.ProcAttr{
		Dir:   "/",
		Env:   helperEnv(),
		Files: append([]*os.File{devnull, outW, outW, lifeR, specR, statusW}, extra...),
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	isolate := confine != "" && r.Isolates(confine)
	var proc *os.Process
	var isolated bool
	var isolationErr string
	lean := r.supervisor()
	if lean != nil {
		proc, isolated, isolationErr, err = lean.start(confine, isolate, attr)
		if err != nil && lasting(err) {
			// The lean binary cannot start here (a mount that forbids
			// exec, say): this program supervises instead, from now on.
			lean.failed.Store(true)
		}
	}
	if lean == nil || err != nil {
		proc, isolated, isolationErr, err = startSupervisor(selfExe, os.Args[0], confine, isolate, attr)
	}
	for _, f := range []*os.File{outW, lifeR, specR, statusW} {
		f.Close()
	}
	if err != nil {
		for _, f := range []*os.File{outR, lifeW, specW, statusR} {
			f.Close()
		}
		return nil, fmt.Errorf("%w: start supervisor: %w", ErrSetup, err)
	}
	p := &supervisedProcess{proc: proc, out: outR, spec: specW, status: statusR, lifeline: lifeW, initFD: -1, final: make(chan wireStatus, 1), isolated: isolated, isolationErr: isolationErr}
	if isolated {
		// The supervisor is the namespace's init: killing it ends every
		// process in the namespace, in the kernel.
		if fd, err := unix.PidfdOpen(proc.Pid, 0); err == nil {
			p.initFD = fd
		}
		// It waits for its spec, so the Preparer is done before anything
		// of the command can run.
		if prepare := r.confs[confine].Prepare; prepare != nil {
			p.release = prepare(proc.Pid)
		}
	}
	go p.readStatus()
	return p, nil
}

// startSupervisor starts exe as a supervisor for confine with attr, in new
// namespaces if isolate asks for them and the kernel allows.
func startSupervisor(exe, name, confine string, isolate bool, attr *os.ProcAttr) (proc *os.Process, isolated bool, isolationErr string, err error) {
	argv := []string{name, superviseArg}
	if confine != "" {
		argv = append(argv, confine)
	}
	withEnv := func(a os.ProcAttr, env string) *os.ProcAttr {
		if env != "" {
			a.Env = append(append([]string{}, a.Env...), env)
		}
		return &a
	}
	isolated, isolationErr = startIsolated(isolate, *attr.Sys, func(sys *syscall.SysProcAttr, extra []string) error {
		return withSupervisorSlack(func(env string) (err error) {
			a := withEnv(*attr, env)
			a.Sys = sys
			proc, err = os.StartProcess(exe, append(argv, extra...), a)
			return err
		})
	})
	if !isolated {
		err = withSupervisorSlack(func(env string) (err error) {
			proc, err = os.StartProcess(exe, argv, withEnv(*attr, env))
			return err
		})
	}
	return proc, isolated, isolationErr, err
}

// releasePrepared undoes the Preparer of an isolated supervisor, once it
// and its namespace are gone.
func (p *supervisedProcess) releasePrepared() {
	if p.release != nil {
		p.release()
		p.release = nil
	}
}

// send hands the command to a waiting supervisor.
func (p *supervisedProcess) send(spec Spec) error {
	err := wireSpec{
		Argv: spec.Argv, Env: nonNilEnv(spec.Env), Dir: spec.Dir,
		Confine: spec.Confine, ConfinePayload: spec.ConfinePayload, KeepTmp: keepSet(spec.KeepTmp),
		ExtraFDs: len(spec.ExtraFiles), TermBelow: spec.TermBelow, Limits: spec.Limits,
	}.writeTo(p.spec)
	if cerr := p.spec.Close(); err == nil {
		err = cerr
	}
	return err
}

func (p *supervisedProcess) output() *os.File { return p.out }

func (p *supervisedProcess) wait() wireStatus {
	// The supervisor has killed its tree before exiting; anything still in
	// its group goes too, before it is reaped so the id cannot be reused.
	awaitExit(p.proc.Pid)
	killGroup(p.proc.Pid, syscall.SIGKILL)
	p.reapMu.Lock()
	_, err := p.proc.Wait()
	p.reaped = true
	p.reapMu.Unlock()
	ws, ok := <-p.final
	p.status.Close()
	p.closeInit()
	p.releasePrepared()
	if !ok {
		// The supervisor ended before reporting: the cut lifeline or the
		// backstop SIGKILL, each of which kills the command with it.
		if err != nil {
			return wireStatus{ExitCode: -1, SetupError: err.Error()}
		}
		return wireStatus{ExitCode: -1, Signal: "SIGKILL", Isolated: p.isolated}
	}
	if ws.IsolationError == "" && !ws.Isolated {
		ws.IsolationError = p.isolationErr
	}
	return ws
}

func (p *supervisedProcess) terminate(grace time.Duration, stop <-chan struct{}) {
	if p.termOnlySupervisor {
		_ = p.proc.Signal(syscall.SIGTERM)
	} else {
		killGroup(p.proc.Pid, syscall.SIGTERM)
	}
	select {
	case <-stop:
		return
	case <-time.After(grace):
	}
	// An isolated run ends here, in the kernel, whether or not the
	// supervisor gets the CPU soon; the lifeline tells it to follow.
	p.killInit()
	p.cutLifeline()
	select {
	case <-stop:
	case <-time.After(backstop):
		// The supervisor is starved or stuck. Killing it now would orphan
		// whatever left its process group (setsid'd children re-parent to
		// init and run on), so the runner kills its tree first, while the
		// supervisor, a subreaper, still holds every descendant.
		p.reapMu.Lock()
		if !p.reaped {
			killTree(p.proc.Pid, false)
			killGroup(p.proc.Pid, syscall.SIGKILL)
		}
		p.reapMu.Unlock()
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
	nameProcess(os.Args[0])
	readCommandSlack()
	for _, fd := range []int{fdLifeline, fdSpec, fdStatus} {
		syscall.CloseOnExec(fd)
	}
	lifeline := os.NewFile(fdLifeline, "lifeline")
	specF := os.NewFile(fdSpec, "spec")
	statusF := os.NewFile(fdStatus, "status")
	if len(os.Args) > 3 {
		parseIsolation(os.Args[3:])
	}
	if isolation.PID {
		return superviseInit(lifeline, specF, statusF)
	}
	report := func(st wireStatus) int {
		sendStatus(statusF, st)
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
		// reports the command as killed (see wait). Killing an isolated
		// helper first ends its whole PID namespace at once, in the kernel,
		// however fast the command forks.
		killInit(syscall.SIGKILL)
		killTree(self, false)
		releaseHelper()
		os.Exit(0)
	}()
	var h *helper
	if len(os.Args) > 2 {
		h, _ = startHelper(os.Args[2]) // on failure the spec's confine step retries
	}
	defer releaseHelper()

	spec, err := readWireSpec(specF)
	specF.Close()
	if err != nil {
		killTree(self, true)
		return report(wireStatus{ExitCode: -1, SetupError: "supervisor: read spec: " + err.Error()})
	}
	ended := make(chan struct{})
	go func() {
		for range sigs {
			terminating.Store(true)
			// An isolated helper forwards SIGTERM to its whole namespace;
			// walking /proc is for the rest.
			if !killInit(syscall.SIGTERM) {
				termBelow(self, spec.TermBelow, ended)
			}
		}
	}()
	if h == nil && spec.Confine != "" {
		if h, err = startHelper(spec.Confine); err != nil {
			return report(wireStatus{ExitCode: -1, SetupError: err.Error()})
		}
	}
	pid, err := startChild(spec, h)
	if err != nil {
		killInit(syscall.SIGKILL)
		killTree(self, true)
		if terminating.Load() {
			// The deadline (or the caller) ended the run while it was
			// being set up, which is what made the setup fail: a killed
			// run, not a failure to start.
			return report(wireStatus{ExitCode: -1, Signal: "SIGKILL"})
		}
		return report(wireStatus{ExitCode: -1, SetupError: err.Error()})
	}
	if h != nil && h.isolated {
		sendStatus(statusF, wireStatus{InitPid: pid})
	}

	st := waitCommand(pid, h)
	close(ended)
	killTree(self, true)
	st.Isolated = h != nil && h.isolated
	st.IsolationError = isolationErr
	return report(st)
}

// waitCommand reaps children until the command (pid) ends and returns its
// status: through an isolated helper (init of the command's namespace),
// the status that helper reported.
func waitCommand(pid int, h *helper) wireStatus {
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		wpid, err := syscall.Wait4(-1, &ws, 0, &ru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return wireStatus{ExitCode: -1} // ECHILD: nothing left to wait for
		}
		if wpid != pid {
			continue
		}
		st := statusOf(ws)
		st.Usage = usageOf(&ru)
		if h != nil && h.isolated {
			// The helper was the namespace's init: the command's own
			// status is what it reported before exiting.
			clearInit()
			st = h.finalStatus(st)
		}
		return st
	}
}

// release is what the Preparer returned for the supervisor's helper; it is
// run once, at the end, from whichever path ends the supervisor.
var (
	releaseMu   sync.Mutex
	releaseFunc func()
)

func releaseHelper() {
	releaseMu.Lock()
	f := releaseFunc
	releaseFunc = nil
	releaseMu.Unlock()
	if f != nil {
		f()
	}
}

// isolationErr is why the helper could not get its namespaces, if it could
// not.
var isolationErr string

// terminating is set once the supervisor was told to stop (SIGTERM at the
// deadline or on cancellation).
var terminating atomic.Bool

// initPid is the host pid of an isolated helper while it lives, 0 otherwise.
var initPid atomic.Int64

func clearInit() { initPid.Store(0) }

// killInit sends sig to the isolated helper, if there is one. SIGKILL from
// outside its namespace always reaches it, and its death kills every process
// in the namespace; SIGTERM reaches its handler, which passes it on to all.
func killInit(sig syscall.Signal) bool {
	pid := int(initPid.Load())
	if pid <= 0 {
		return false
	}
	_ = syscall.Kill(pid, sig)
	return true
}

// helper is a started confine helper waiting for its spec.
type helper struct {
	pid      int
	spec     *os.File // write end
	error    *os.File // read end
	isolated bool     // started in its own namespaces: it acts as init
	reports  *bufio.Reader
}

// Arguments after the confiner's name that tell a helper its namespaces.
const (
	isoPID   = "pid"
	isoMount = "mnt"
	isoUser  = "user"
)

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
	attr := &syscall.ProcAttr{
		Dir:   "/",
		Env:   helperEnv(),
		Files: []uintptr{devnull.Fd(), 1, 2, specR.Fd(), errW.Fd()},
		// Should the supervisor die without cutting anything, the helper
		// (and with an isolated one, its whole namespace) dies with it.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	argv := []string{selfExe, confineArg, confine}
	pid := 0
	isolated, why := startIsolated(helperConfs[confine].Isolate, *attr.Sys, func(sys *syscall.SysProcAttr, extra []string) (err error) {
		a := *attr
		a.Sys = sys
		pid, err = forkWithSlack(func() (int, error) { return syscall.ForkExec(selfExe, append(argv, extra...), &a) })
		return err
	})
	if why != "" {
		isolationErr = why
	}
	if !isolated {
		// No namespaces here (a kernel or container that refuses them):
		// the confiner learns so from CurrentIsolation.
		pid, err = forkWithSlack(func() (int, error) { return syscall.ForkExec(selfExe, argv, attr) })
	}
	specR.Close()
	errW.Close()
	if err != nil {
		specW.Close()
		errR.Close()
		return nil, fmt.Errorf("start confine helper: %w", err)
	}
	h := &helper{pid: pid, spec: specW, error: errR, isolated: isolated, reports: bufio.NewReader(errR)}
	if isolated {
		initPid.Store(int64(pid))
	}
	if prepare := helperConfs[confine].Prepare; prepare != nil {
		if release := prepare(pid); release != nil {
			releaseMu.Lock()
			releaseFunc = release
			releaseMu.Unlock()
		}
	}
	return h, nil
}

// startIsolated calls start with base's attributes plus new namespaces
// (namespaceAttr) when want is set and namespaces are not turned off
// (EnvNoNamespaces). It reports whether start succeeded, and why it did
// not; the caller then starts without namespaces.
func startIsolated(want bool, base syscall.SysProcAttr, start func(sys *syscall.SysProcAttr, extra []string) error) (bool, string) {
	if !want || os.Getenv(EnvNoNamespaces) == "1" {
		return false, ""
	}
	sys, extra := namespaceAttr(base)
	if err := start(sys, extra); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// namespaceAttr returns base with the clone attributes of an isolated
// helper added: new PID and mount namespaces, inside a user namespace that
// maps only the caller's own ids when the caller is not root (which needs
// no privilege).
func namespaceAttr(base syscall.SysProcAttr) (*syscall.SysProcAttr, []string) {
	attr := &base
	attr.Cloneflags |= syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
	extra := []string{isoPID, isoMount}
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// Exec as a non-zero uid empties the capability sets the new
		// namespace granted; ambient ones survive it. The confiner needs
		// these for its mounts, for dropping capabilities and for bringing
		// up a run's loopback (network by name), and
		// drops them all on the command's thread. An overlay of staged
		// writes keeps its mounter's credentials for the copy-ups it makes
		// later, which need the file capabilities too; in this namespace
		// they reach only files of the caller's own uid and gid, the only
		// ones it maps.
		attr.AmbientCaps = []uintptr{capSysAdmin, capSetpcap, capNetAdmin, capChown, capDacOverride, capFowner, capFsetid}
		extra = append(extra, isoUser)
	}
	return attr, extra
}

// Capability numbers (linux/capability.h).
const (
	capChown       = 0
	capDacOverride = 1
	capFowner      = 3
	capFsetid      = 4
	capSetpcap     = 8
	capNetAdmin    = 12
	capSysAdmin    = 21
)

// helperReport is what an isolated helper writes on its error pipe: first
// Started (or Error), then, when the command has ended, its status.
type helperReport struct {
	Started  bool   `json:"started,omitempty"`
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	Final    bool   `json:"final,omitempty"`
}

// finalStatus reads the command's status as the isolated helper reported
// it; ended is how the helper itself ended, used when it reported nothing
// (it was killed: the teardown, or the backstop).
func (h *helper) finalStatus(ended wireStatus) wireStatus {
	defer h.error.Close()
	line, err := h.reports.ReadBytes('\n')
	var r helperReport
	if err != nil && len(line) == 0 || json.Unmarshal(line, &r) != nil || !r.Final {
		if ended.Signal == "" {
			ended.SetupError = fmt.Sprintf("confine helper ended (exit %d) without reporting the command's status", ended.ExitCode)
		}
		return ended
	}
	return wireStatus{ExitCode: r.ExitCode, Signal: r.Signal}
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
		onlyStdio()
		files := []uintptr{devnull.Fd(), 1, 2}
		for i := 0; i < spec.ExtraFDs; i++ {
			files = append(files, uintptr(fdExtra+i))
		}
		path, argv := spec.Argv[0], spec.Argv
		if spec.Limits != (shared.Limits{}) {
			path, argv = selfExe, limitsArgv(spec.Limits, spec.Argv)
		}
		pid, err := forkWithSlack(func() (int, error) {
			return syscall.ForkExec(path, argv, &syscall.ProcAttr{
				Dir:   spec.Dir,
				Env:   spec.Env,
				Files: files,
			})
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
	err := spec.writeTo(h.spec)
	h.spec.Close()
	if h.isolated {
		// An isolated helper stays as init: one report line says whether
		// the command started; the pipe stays open for its final status.
		line, rerr := h.reports.ReadBytes('\n')
		var r helperReport
		if jerr := json.Unmarshal(line, &r); jerr != nil || !r.Started {
			msg := r.Error
			if msg == "" && err != nil {
				msg = "hand spec to confine helper: " + err.Error()
			} else if msg == "" {
				msg = fmt.Sprintf("confine helper ended before starting the command (%v)", rerr)
			}
			h.error.Close()
			killInit(syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(h.pid, &ws, 0, nil)
			clearInit()
			return 0, errors.New(msg)
		}
		return h.pid, nil
	}
	defer h.error.Close()
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

// A confine helper or supervisor keeps its main goroutine on the main
// thread, locked from package initialisation (the only time the runtime
// guarantees that): an isolated one confines and forks from another thread,
// so that the main thread, the one a command would signal or trace as pid
// 1, stays outside the command's Landlock domain; an unisolated helper
// confines and execs from the main thread.
func init() {
	if len(os.Args) > 1 && (os.Args[1] == confineArg || os.Args[1] == superviseArg) {
		runtime.LockOSThread()
	}
}

// onlyStdio marks every descriptor above stderr close-on-exec, so the
// command starts with stdin, stdout and stderr alone, whatever the
// process that started skillhost left open (a descriptor inherited without
// close-on-exec would otherwise pass down to every child).
func onlyStdio() {
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
}

// parseIsolation records the namespaces named after the confiner's name.
func parseIsolation(args []string) {
	for _, a := range args {
		switch a {
		case isoPID:
			isolation.PID = true
		case isoMount:
			isolation.Mount = true
		case isoUser:
			isolation.User = true
		}
	}
}

// confineMain is the confine helper: it waits for its command, applies the
// named confiner and starts the command: by exec, or, when it is the init of
// its own PID namespace, by fork from a confined thread, staying behind to
// reap and to report.
func confineMain() int {
	syscall.CloseOnExec(fdConfineSpec)
	syscall.CloseOnExec(fdConfineErr)
	parseIsolation(os.Args[3:])
	errF := os.NewFile(fdConfineErr, "confine-error")
	fail := func(err error) int {
		if isolation.PID {
			_ = json.NewEncoder(errF).Encode(helperReport{Error: err.Error()})
		} else {
			_, _ = errF.WriteString(err.Error())
		}
		return 126
	}
	if isolation.PID {
		// Nothing the command does may read this process's memory or
		// descriptors through /proc.
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
	specF := os.NewFile(fdConfineSpec, "confine-spec")
	spec, err := readWireSpec(specF)
	specF.Close()
	if err != nil {
		return fail(fmt.Errorf("confine helper: read spec: %w", err))
	}
	fn := helperConfs[spec.Confine].Confine
	if fn == nil {
		return fail(fmt.Errorf("confine helper: no confiner named %q in this binary", spec.Confine))
	}
	if !isolation.PID {
		if err := confineThread(fn, spec); err != nil {
			return fail(err)
		}
		// Nothing but stdio may reach the command, and it starts in a
		// session of its own (the supervisor's walk of /proc still finds
		// it).
		onlyStdio()
		_, _ = unix.Setsid()
		err = syscall.Exec(spec.Argv[0], spec.Argv, spec.Env)
		return fail(&os.PathError{Op: "exec", Path: spec.Argv[0], Err: err})
	}
	return initMain(fn, spec, errF)
}

// confineThread applies fn to the calling (locked) thread and moves it to
// the command's working directory.
func confineThread(fn Confiner, spec wireSpec) error {
	if err := fn(spec.ConfinePayload, isolation); err != nil {
		return fmt.Errorf("confine (%s): %w", spec.Confine, err)
	}
	if spec.Dir != "" {
		if err := os.Chdir(spec.Dir); err != nil {
			return fmt.Errorf("chdir: %w", err)
		}
	}
	return nil
}

// initMain runs the command as the child of this process, the init of a
// PID namespace (see forkConfined). When the command ends, everything else
// in the namespace is killed and reaped, then its status is reported on
// errF.
func initMain(fn Confiner, spec wireSpec, errF *os.File) int {
	report := func(r helperReport) { _ = json.NewEncoder(errF).Encode(r) }
	forwardTerm(nil)
	pid, err := forkConfined(fn, spec)
	if err != nil {
		report(helperReport{Error: err.Error()})
		return 126
	}
	report(helperReport{Started: true})
	st := reapNamespace(pid)
	report(helperReport{Final: true, ExitCode: st.ExitCode, Signal: st.Signal})
	return 0
}

// forwardTerm makes SIGTERM from outside reach the init of a PID namespace
// at all (init gets only the signals it handles) and passes it on to every
// process in the namespace; terminating, if not nil, is set first.
func forwardTerm(terminating *atomic.Bool) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for range sigs {
			if terminating != nil {
				terminating.Store(true)
			}
			_ = syscall.Kill(-1, syscall.SIGTERM)
		}
	}()
}

// forkConfined starts the command as a child of this process, the init of
// a PID namespace, and returns its pid once it has exec'd. The command is
// forked from a thread that is not the main one, after the confiner
// restricted that thread alone: the main thread, the one the command would
// signal or trace as pid 1, stays outside the command's Landlock domain, so
// those attempts fail.
func forkConfined(fn Confiner, spec wireSpec) (int, error) {
	type started struct {
		pid int
		err error
	}
	ch := make(chan started, 1)
	go func() {
		// Locked and never unlocked: the runtime ends this thread with the
		// goroutine, so its restricted credentials are never reused.
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			ch <- started{err: errors.New("confine helper: the command's thread is the main thread")}
			return
		}
		restoreSlack()
		if err := confineThread(fn, spec); err != nil {
			ch <- started{err: err}
			return
		}
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			ch <- started{err: err}
			return
		}
		defer devnull.Close()
		onlyStdio()
		pid, err := syscall.ForkExec(spec.Argv[0], spec.Argv, &syscall.ProcAttr{
			Env:   spec.Env,
			Files: []uintptr{devnull.Fd(), 1, 2},
			// Its own session (so its own group, and no controlling
			// terminal): a group-wide setpriority or kill by the command
			// reaches the command only, and it cannot join the
			// supervisor's group, which is in another session.
			Sys: &syscall.SysProcAttr{Setsid: true},
		})
		if err != nil {
			err = fmt.Errorf("exec %s: %w", spec.Argv[0], err)
		}
		ch <- started{pid: pid, err: err}
	}()
	st := <-ch
	return st.pid, st.err
}

// reapNamespace is the init of a PID namespace waiting for the command
// (pid): it reaps everything, and when the command ends kills whatever it
// left behind and waits until the namespace is empty. It returns the
// command's status (exit -1 if it was never seen to end).
func reapNamespace(pid int) wireStatus {
	final := wireStatus{ExitCode: -1}
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return final // ECHILD: the namespace is empty
		}
		if wpid == pid {
			final = statusOf(ws)
			// Whatever the command left behind goes with it. A process
			// being killed cannot fork, so one round reaches them all;
			// later rounds cost nothing.
			_ = syscall.Kill(-1, syscall.SIGKILL)
		}
	}
}
