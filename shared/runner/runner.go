package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// Defaults applied by [Run] to zero fields of a [Spec].
const (
	DefaultOutputLimit = 1 << 20
	DefaultKillGrace   = 2 * time.Second
)

// drainWait bounds how long Run waits for the end of the output after the
// command and its supervisor are gone; what they wrote is kept regardless.
// Only a descendant that escaped both the process group and the supervisor
// (or a process it handed the pipe to) could still hold the pipe open.
const drainWait = 250 * time.Millisecond

// beforeDrain lets tests start the output reader late, as a starved
// scheduler or a throttled CPU can.
var beforeDrain = func() {}

// Spec describes one command to run.
type Spec struct {
	// Argv is the command and its arguments. Argv[0] is resolved with
	// exec.LookPath against the caller's PATH when it contains no slash;
	// callers that scrub the environment should pass an absolute path.
	Argv []string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env is the complete environment of the command. Nothing is inherited.
	Env []string
	// Timeout bounds the whole lifetime of the command and its
	// descendants. Zero means no deadline.
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL at the deadline;
	// zero means DefaultKillGrace.
	KillGrace time.Duration
	// OutputLimit caps the bytes of output passed on; zero means
	// DefaultOutputLimit and a negative value means no cap.
	OutputLimit int64
	// Confine names a confiner of the Runner (WithConfiner) that is
	// applied to the command's process just before it execs. It requires
	// supervision (see Supervised).
	Confine string
	// ConfinePayload is handed to the confiner unchanged.
	ConfinePayload []byte
	// KeepTmp asks an isolated supervisor whose confiner built a view with
	// a private /tmp to send back, once every process of the run is gone,
	// the regular files left beneath the directories of that /tmp named
	// here (names of /tmp's top level, such as the host's own), within
	// MaxLeftFiles and MaxLeftBytes; TmpLeft receives each. A run's /tmp
	// goes with it: this is how a backend can tell the host about writes
	// it would otherwise lose, without copying a run's own scratch.
	KeepTmp []string
	TmpLeft func(LeftFile)
	// Used, if set, receives what the command used: as its supervisor
	// reaped it (the command and the descendants it waited for), or as a
	// status channel reported it. It is not called where neither knows
	// (an unsupervised or isolated run without a status channel). The
	// contract's Result has no place for it.
	Used func(Usage)

	// ExtraFiles are passed to the command as descriptors 3, 4, ... in
	// order: for a wrapper that takes descriptors (bubblewrap's --bind-fd,
	// --seccomp, --info-fd, --json-status-fd). Run does not close them.
	// They cannot be combined with Confine.
	ExtraFiles []*os.File
	// StatusChannel asks for the command's real status through a pipe whose
	// write end the command receives as descriptor StatusFD(spec), after
	// ExtraFiles: a wrapper that forks reports its inner command there
	// (itself, or through the runner's StatusInit).
	// When the channel carries a status, the Result's ExitCode and Signal,
	// and what Used receives, are the command's; otherwise they are the
	// wrapper's. It cannot
	// be combined with Confine.
	StatusChannel bool
	// DecodeStatus reads the channel's bytes (at most 64 KiB) into a status;
	// nil means DecodeStatus, the status init's format.
	DecodeStatus func([]byte) (CommandStatus, bool)
	// TermBelow spares the first TermBelow generations of processes from
	// the deadline's SIGTERM: they are the wrapper's own (bubblewrap and
	// the init of its PID namespace, say), which would die of it and take
	// the command down at once with --die-with-parent. Only the processes
	// below them get SIGTERM, so the command has its KillGrace; at its end
	// everything is killed as usual. It needs supervision (Linux); without
	// it the whole group gets SIGTERM.
	TermBelow int
	// Limits bound the command's resources. Run applies them to a command
	// it starts itself, wrapper and all (with setrlimit(2): open files,
	// file size, memory as RLIMIT_DATA, processes as RLIMIT_NPROC counted
	// from the user's processes at the start), and refuses a Spec with one
	// it cannot apply by an error that wraps ErrLimits and names each (see
	// SplitLimits). A confiner named in Confine applies them itself.
	// SpecFor leaves them empty: a backend that enforces the request's
	// limits sets them from Request.Limits.
	Limits shared.Limits
}

// LeftFile is a file a run left in its private /tmp.
type LeftFile struct {
	Path string `json:"path"`
	Mode uint32 `json:"mode"`
	Data []byte `json:"data"`
}

// deliverLeft hands the files a run left in its /tmp to TmpLeft.
func (spec Spec) deliverLeft(left []LeftFile) {
	if spec.TmpLeft == nil {
		return
	}
	for _, f := range left {
		spec.TmpLeft(f)
	}
}

// Bounds of what KeepTmp sends back.
const (
	MaxLeftFiles = 256
	MaxLeftBytes = 16 << 20
)

// ErrSetup is wrapped by errors that happen before the command runs: the
// program cannot be found or executed, or a confiner failed.
var ErrSetup = errors.New("setup failed")

// TruncationMarker returns the line emitted once when output is cut.
func TruncationMarker(limit int64) string {
	return fmt.Sprintf("\n[output truncated: exceeded %d bytes]\n", limit)
}

// Run starts spec, streams its merged output to emit in arrival order, and
// waits until the command and all of its descendants are gone. emit is never
// called concurrently and may be nil. Run returns an error wrapping ErrSetup
// when the command could not start; a command that starts and fails is
// reported in the contract's Result (ExitCode, Signal, TimedOut, Truncated,
// Duration), not as an error. A confined spec whose namespaces the kernel
// refused says so in Result.NotEnforced. It uses a runner the package keeps;
// a program that needs settings of its own makes a Runner (New).
func Run(ctx context.Context, spec Spec, emit func([]byte)) (shared.Result, error) {
	return std.Run(ctx, spec, emit)
}

// Run is the package's Run with this runner.
func (r *Runner) Run(ctx context.Context, spec Spec, emit func([]byte)) (shared.Result, error) {
	spec, err := prepare(spec)
	if err != nil {
		return shared.Result{}, err
	}
	if _, ok := r.confs[spec.Confine]; spec.Confine != "" && !ok {
		return shared.Result{}, fmt.Errorf("%w: no confiner named %q in this runner (runner.WithConfiner)", ErrSetup, spec.Confine)
	}
	if emit == nil {
		emit = func([]byte) {}
	}
	var sc *statusChannel
	if spec.StatusChannel {
		if sc, err = openStatus(&spec); err != nil {
			return shared.Result{}, err
		}
		defer sc.close()
	}
	var p process
	if Supervised() {
		p, err = r.startSupervised(spec)
	} else {
		p, err = startDirect(spec)
	}
	sc.started()
	if err != nil {
		return shared.Result{}, err
	}
	outR := p.output()
	defer outR.Close()
	start := time.Now()

	out := newCappedOutput(spec.OutputLimit, emit)
	readDone := make(chan struct{})
	go func() {
		beforeDrain()
		out.drain(outR)
		close(readDone)
	}()

	res := shared.Result{}
	var once sync.Once
	stop := make(chan struct{})
	kill := func(reason *bool) {
		once.Do(func() {
			*reason = true
			go p.terminate(spec.KillGrace, stop)
		})
	}
	var deadline <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	exited := make(chan struct{})
	var st wireStatus
	go func() {
		st = p.wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-deadline:
		kill(&res.TimedOut)
		<-exited
	case <-ctx.Done():
		var canceled bool
		kill(&canceled)
		<-exited
	}
	close(stop)
	res.Duration = time.Since(start)
	p.cleanup()

	finishRead(outR, readDone)
	if st.SetupError != "" {
		return shared.Result{}, fmt.Errorf("%w: %s", ErrSetup, st.SetupError)
	}
	res.ExitCode, res.Signal, res.Truncated = st.ExitCode, st.Signal, out.truncated
	usage := st.Usage
	if cs, ok := sc.result(spec); ok {
		res.ExitCode, res.Signal = cs.ExitCode, cs.Signal
		if cs.Usage != nil {
			usage = cs.Usage
		}
	}
	if usage != nil && spec.Used != nil {
		spec.Used(*usage)
	}
	spec.deliverLeft(st.Left)
	if spec.Confine != "" && r.Isolates(spec.Confine) && !st.Isolated {
		res.NotEnforced = append(res.NotEnforced, notIsolated(st.IsolationError))
	}
	return res, nil
}

// notIsolated is the NotEnforced entry of a confined run that asked for
// namespaces and did not get them, for the reason why (if known).
func notIsolated(why string) string {
	if why == "" {
		why = "the kernel refused them"
	}
	return "private PID and mount namespaces (" + why + "): the backend fell back to its weaker protections for this run"
}

// prepare checks spec and fills in its defaults.
func prepare(spec Spec) (Spec, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return spec, fmt.Errorf("%w: empty argv", ErrSetup)
	}
	if spec.KillGrace <= 0 {
		spec.KillGrace = DefaultKillGrace
	}
	if spec.OutputLimit == 0 {
		spec.OutputLimit = DefaultOutputLimit
	}
	if spec.Confine != "" && !Supervised() {
		return spec, fmt.Errorf("%w: confiner %q needs supervision, which this platform does not provide", ErrSetup, spec.Confine)
	}
	if spec.Confine != "" && (len(spec.ExtraFiles) > 0 || spec.StatusChannel) {
		return spec, fmt.Errorf("%w: extra descriptors and a status channel are for wrappers; confiner %q starts the command itself", ErrSetup, spec.Confine)
	}
	if err := limitsError(spec); err != nil {
		return spec, err
	}
	argv0 := spec.Argv[0]
	if !containsSlash(argv0) {
		p, err := exec.LookPath(argv0)
		if err != nil {
			return spec, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		spec.Argv = append([]string{p}, spec.Argv[1:]...)
	}
	return spec, nil
}

// finishRead waits for the end of the output, or for drainWait once the
// command is gone, keeping what the pipe already holds.
func finishRead(r *os.File, done <-chan struct{}) {
	select {
	case <-done:
	case <-time.After(drainWait):
		if r.SetReadDeadline(time.Now()) != nil {
			r.Close() // not pollable: give up on what is left
		}
		<-done
	}
}

// statusChannel is the pipe of Spec.StatusChannel. Its methods accept a nil
// receiver: no channel.
type statusChannel struct {
	r, w *os.File
	data []byte
	done chan struct{}
}

// openStatus makes the pipe and adds its write end to spec's ExtraFiles.
func openStatus(spec *Spec) (*statusChannel, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: status channel: %w", ErrSetup, err)
	}
	c := &statusChannel{r: r, w: w, done: make(chan struct{})}
	spec.ExtraFiles = append(append([]*os.File(nil), spec.ExtraFiles...), w)
	go func() {
		c.data, _ = io.ReadAll(io.LimitReader(r, maxStatusBytes))
		close(c.done)
	}()
	return c, nil
}

// started closes the runner's copy of the write end once the command has
// its own.
func (c *statusChannel) started() {
	if c != nil && c.w != nil {
		c.w.Close()
		c.w = nil
	}
}

// result is the status the channel carried, read to its end (or for
// drainWait after the command is gone).
func (c *statusChannel) result(spec Spec) (CommandStatus, bool) {
	if c == nil {
		return CommandStatus{}, false
	}
	finishRead(c.r, c.done)
	decode := spec.DecodeStatus
	if decode == nil {
		decode = DecodeStatus
	}
	return decode(c.data)
}

func (c *statusChannel) close() {
	if c != nil {
		c.started()
		c.r.Close()
	}
}

// process is a started command, supervised or not.
type process interface {
	// output is the read end of the command's merged stdout and stderr.
	output() *os.File
	// wait blocks until the command has ended and reports how.
	wait() wireStatus
	// terminate sends SIGTERM, then after grace kills everything, unless
	// stop is closed first.
	terminate(grace time.Duration, stop <-chan struct{})
	// cleanup kills anything left of the command after it ended.
	cleanup()
}

// statusOf is how a command the runner reaped itself ended.
func statusOf(ws syscall.WaitStatus) wireStatus {
	if ws.Signaled() {
		return wireStatus{ExitCode: -1, Signal: SignalName(ws.Signal())}
	}
	return wireStatus{ExitCode: ws.ExitStatus()}
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

// nonNilEnv keeps an empty environment empty: os.StartProcess treats a nil
// Env as "inherit the caller's".
func nonNilEnv(env []string) []string {
	if env == nil {
		return []string{}
	}
	return env
}
