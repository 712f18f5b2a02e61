package runner

import (
	"fmt"

	"github.com/skillhost/skillhost/shared"
	"os"
	"sync/atomic"
)

// Private argv[1] values that make a binary act as supervisor or confine
// helper. They are not flags: nothing else in argv is parsed before the
// process is dispatched on them.
const (
	superviseArg = "__skillhost-supervise"
	confineArg   = "__skillhost-confine"
)

// Confiner restricts the calling thread (for example with Landlock or
// seccomp) just before the command is started from it. It runs in a fresh,
// single-use process on a locked OS thread; it must not start goroutines
// that outlive it. iso says which namespaces that process got (see
// Confinement.Isolate), so the confiner can make up for what is missing.
// Without PID isolation the thread then execs the command. With it the
// thread is not the process's main thread, and the command is forked from
// it, so that the command and the helper, which stays behind as the
// namespace's init, are in different Landlock domains and the command
// cannot signal or trace its init. The working directory is set after the
// Confiner returns. An error aborts the run and is reported to Run's
// caller as a setup error.
type Confiner func(payload []byte, iso Isolation) error

// Preparer does, ahead of time, the slow part of confining a command that
// does not depend on it (moving the confining process into a cgroup, say).
// It runs as soon as the process that will call the Confiner has started,
// usually long before a command arrives, with that process's id: for an
// isolated confiner, in the caller of Run, with the supervisor's; otherwise
// in the supervisor, with the confine helper's. It returns a function called
// once that process and everything it started are gone (nil if there is
// nothing to undo). It must not fail: what it could not do, the Confiner
// does or reports.
type Preparer func(helperPid int) (release func())

// Isolation says which namespaces the process that confines the command
// (the supervisor itself, or a confine helper where the supervisor could
// not get namespaces) was started in.
type Isolation struct {
	// PID: the helper is the init process of a new PID namespace. It stays
	// alive while the command runs, reaps what the command leaves, and when
	// it dies the kernel kills everything left in the namespace: nothing the
	// command starts can outlive the run or be missed by the teardown.
	PID bool
	// Mount: the helper has a private mount namespace the confiner may
	// rearrange (read-only remounts, bind mounts) without touching the host.
	Mount bool
	// User: the helper is in a new user namespace mapping only its own uid
	// and gid, which is what lets an unprivileged user create the others.
	// Per-user limits such as RLIMIT_NPROC count from zero inside it.
	User bool
}

// Confinement is a confiner a Runner offers under a name (WithConfiner)
// for Spec.Confine.
type Confinement struct {
	// Confine restricts the command's thread; required.
	Confine Confiner
	// Prepare, if set, does the slow part ahead of time.
	Prepare Preparer
	// Isolate asks that the commands start in new PID and mount namespaces
	// (and a user namespace when the caller is not root). The supervisor is
	// then started in them as their init and confines the command itself,
	// with no confine helper. Where the kernel refuses, the supervisor
	// starts without them and its confine helper tries again; the
	// Confiner's Isolation says what it got.
	Isolate bool
}

// WithConfiner offers c under name to the runner's Specs (Spec.Confine).
//
// The supervisor and confine helper of a confined command are this binary
// re-executed; New, called with this option in such a process, does that
// job and exits. So a program that uses confiners creates its Runner
// first thing in main (or TestMain), before anything that must not happen
// in a helper; whatever main does before runs in each helper as well.
func WithConfiner(name string, c Confinement) Option {
	return func(r *Runner) {
		if r.confs == nil {
			r.confs = map[string]Confinement{}
		}
		if _, dup := r.confs[name]; dup {
			panic(fmt.Sprintf("runner: confiner %q given twice", name))
		}
		r.confs[name] = c
	}
}

// Isolates reports whether the confiner called name asked for isolation.
func (r *Runner) Isolates(name string) bool { return r.confs[name].Isolate }

// helperConfs are the confinements of the Runner whose New made this
// process a supervisor or confine helper; isolation is what the process got.
var (
	helperConfs map[string]Confinement
	isolation   Isolation
)

// dispatch makes this process the supervisor or confine helper it was
// started as, for one of r's confiners, and exits; it returns at once
// in any other process.
func (r *Runner) dispatch() {
	if len(os.Args) < 3 || (os.Args[1] != superviseArg && os.Args[1] != confineArg) {
		return
	}
	if _, ok := r.confs[os.Args[2]]; !ok {
		return // another runner's, if any
	}
	helperConfs = r.confs
	if os.Args[1] == superviseArg {
		os.Exit(superviseMain())
	}
	os.Exit(confineMain())
}

// supervised is whether Run interposes a supervisor; tests turn it off to
// cover the direct path.
var supervised atomic.Bool

// Supervised reports whether Run interposes a supervisor, that is whether
// the platform supports one (Linux).
func Supervised() bool { return supervised.Load() }

// This init makes this process the supervisor of an unconfined
// command, if it was started as one, while the package initialises.
func init() {
	if len(os.Args) == 2 && os.Args[1] == superviseArg {
		os.Exit(superviseMain())
	}
	supervised.Store(supervisionSupported())
}

// wireSpec travels from Run to the supervisor and from the supervisor to the
// confine helper on an inherited pipe, as one frame of its own encoding
// (writeTo), which keeps strings that are not UTF-8 byte for byte.
type wireSpec struct {
	Argv           []string
	Env            []string
	Dir            string
	Confine        string
	ConfinePayload []byte
	// KeepTmp is Spec.KeepTmp as one string (keepSet): a fresh
	// supervisor decodes it with one allocation, however many directories
	// the host's /tmp holds.
	KeepTmp string
	// ExtraFDs is how many descriptors the supervisor inherited after its
	// own (from fdExtra on) to pass to the command from 3 on.
	ExtraFDs  int
	TermBelow int
	Limits    shared.Limits
}

// wireStatus travels from the supervisor back to Run, as frames
// (wireStatus.writeTo). The supervisor writes it once at the end; before
// that, for an isolated helper, one with only InitPid, so that Run can kill
// the namespace at the deadline without waiting for the supervisor to be
// scheduled.
type wireStatus struct {
	InitPid    int
	ExitCode   int
	Signal     string
	SetupError string
	Isolated   bool
	// IsolationError says why the helper got no namespaces, if it asked.
	IsolationError string
	// Left are the files the run left in its private /tmp (KeepTmp).
	Left []LeftFile
	// Usage is what the command used, where the supervisor reaped it.
	Usage *Usage
}
