package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
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
	// Confine names a Confiner registered with RegisterConfiner that is
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

// Result describes how a command ended.
type Result struct {
	// ExitCode is the exit status, or -1 when the command was killed by
	// a signal.
	ExitCode int
	// Signal names the signal that killed the command ("SIGKILL"), if any.
	Signal string
	// TimedOut reports that the deadline passed and the command was killed.
	TimedOut bool
	// Canceled reports that the context was canceled before the command
	// finished.
	Canceled bool
	// Truncated reports that output beyond the limit was dropped.
	Truncated bool
	// Duration is the wall time from start to the end of the command.
	Duration time.Duration
	// OutputBytes counts every byte the command wrote, including dropped
	// ones.
	OutputBytes int64
	// Isolated reports that the command ran under a confine helper that
	// got its own PID and mount namespaces (see RegisterIsolation);
	// IsolationError says why one that asked did not.
	Isolated       bool
	IsolationError string
}

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
// reported in the Result, not as an error.
func Run(ctx context.Context, spec Spec, emit func([]byte)) (Result, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return Result{}, fmt.Errorf("%w: empty argv", ErrSetup)
	}
	if spec.KillGrace <= 0 {
		spec.KillGrace = DefaultKillGrace
	}
	if spec.OutputLimit == 0 {
		spec.OutputLimit = DefaultOutputLimit
	}
	if emit == nil {
		emit = func([]byte) {}
	}
	if spec.Confine != "" && !Supervised() {
		return Result{}, fmt.Errorf("%w: confiner %q needs supervision, which this binary does not provide (call runner.Init in main)", ErrSetup, spec.Confine)
	}
	argv0 := spec.Argv[0]
	if !containsSlash(argv0) {
		p, err := exec.LookPath(argv0)
		if err != nil {
			return Result{}, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		spec.Argv = append([]string{p}, spec.Argv[1:]...)
	}

	var p process
	var err error
	if Supervised() {
		p, err = startSupervised(spec)
	} else {
		p, err = startDirect(spec)
	}
	if err != nil {
		return Result{}, err
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

	res := Result{}
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
	var st status
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
		kill(&res.Canceled)
		<-exited
	}
	close(stop)
	res.Duration = time.Since(start)
	p.cleanup()

	select {
	case <-readDone:
	case <-time.After(drainWait):
		if outR.SetReadDeadline(time.Now()) != nil {
			outR.Close() // not pollable: give up on what is left
		}
		<-readDone
	}
	if st.setupErr != "" {
		return Result{}, fmt.Errorf("%w: %s", ErrSetup, st.setupErr)
	}
	res.ExitCode, res.Signal, res.Isolated, res.IsolationError = st.exitCode, st.signal, st.isolated, st.isolationErr
	spec.deliverLeft(st.left)
	res.Truncated, res.OutputBytes = out.truncated, out.total
	return res, nil
}

// process is a started command, supervised or not.
type process interface {
	// output is the read end of the command's merged stdout and stderr.
	output() *os.File
	// wait blocks until the command has ended and reports how.
	wait() status
	// terminate sends SIGTERM, then after grace kills everything, unless
	// stop is closed first.
	terminate(grace time.Duration, stop <-chan struct{})
	// cleanup kills anything left of the command after it ended.
	cleanup()
}

type status struct {
	exitCode     int
	signal       string
	setupErr     string
	isolated     bool
	isolationErr string
	left         []LeftFile
}

func statusOf(ws syscall.WaitStatus) status {
	if ws.Signaled() {
		return status{exitCode: -1, signal: SignalName(ws.Signal())}
	}
	return status{exitCode: ws.ExitStatus()}
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
