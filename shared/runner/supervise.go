package runner

import (
	"fmt"

	"github.com/skillhost/skillhost/shared"
	"os"
	"sync"
	"sync/atomic"
)

// Private argv[1] values that make a binary act as supervisor or confine
// helper. They are not flags: nothing else in argv is parsed before Init
// dispatches on them.
const (
	superviseArg = "__skillhost-supervise"
	confineArg   = "__skillhost-confine"
)

// Confiner restricts the calling thread (for example with Landlock or
// seccomp) just before the command is started from it. It runs in a fresh,
// single-use process on a locked OS thread; it must not start goroutines
// that outlive it. Without PID isolation the thread then execs the command.
// With it (see [RegisterIsolation]) the thread is not the process's main
// thread, and the command is forked from it, so that the command and the
// helper, which stays behind as the namespace's init, are in different
// Landlock domains and the command cannot signal or trace its init. The
// working directory is set after the Confiner returns. An error aborts the
// run and is reported to Run's caller as a setup error.
type Confiner func(payload []byte) error

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

var (
	supervised atomic.Bool

	confinersMu sync.RWMutex
	confiners   = map[string]Confiner{}
	preparers   = map[string]Preparer{}
	isolating   = map[string]bool{}

	// isolation is what the current process, a confine helper, got.
	isolation Isolation
)

// RegisterPreparer adds a Preparer to the confiner called name. Like
// RegisterConfiner it must be called before Init.
func RegisterPreparer(name string, fn Preparer) {
	confinersMu.Lock()
	defer confinersMu.Unlock()
	preparers[name] = fn
}

func preparer(name string) Preparer {
	confinersMu.RLock()
	defer confinersMu.RUnlock()
	return preparers[name]
}

// RegisterIsolation asks that the commands of the confiner called name
// start in new PID and mount namespaces (and a user namespace when the
// caller is not root). The supervisor is then started in them as their
// init and confines the command itself, with no confine helper. Where the
// kernel refuses, the supervisor starts without them and its confine
// helper tries again; [CurrentIsolation] says what the confiner got, so it
// can make up for what is missing. Like RegisterConfiner it must be called
// before Init.
func RegisterIsolation(name string) {
	confinersMu.Lock()
	defer confinersMu.Unlock()
	isolating[name] = true
}

// Isolates reports whether the confiner called name asked for isolation
// with RegisterIsolation.
func Isolates(name string) bool {
	confinersMu.RLock()
	defer confinersMu.RUnlock()
	return isolating[name]
}

// CurrentIsolation reports, inside a Confiner, which namespaces the confine
// helper runs in. Elsewhere it is the zero Isolation.
func CurrentIsolation() Isolation { return isolation }

// RegisterConfiner makes fn available under name to Spec.Confine. It must be
// called before Init, typically from a package init function, because Init
// dispatches helper processes immediately.
func RegisterConfiner(name string, fn Confiner) {
	confinersMu.Lock()
	defer confinersMu.Unlock()
	if _, dup := confiners[name]; dup {
		panic(fmt.Sprintf("runner: confiner %q registered twice", name))
	}
	confiners[name] = fn
}

func confiner(name string) Confiner {
	confinersMu.RLock()
	defer confinersMu.RUnlock()
	return confiners[name]
}

// Init must be called first thing in main (or TestMain) by any binary that
// runs commands with Run. When the binary was started as a supervisor or
// confine helper, Init does that job and exits the process; otherwise it
// enables supervision for later Run calls where the platform supports it.
func Init() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case superviseArg:
			os.Exit(superviseMain())
		case confineArg:
			os.Exit(confineMain())
		}
	}
	supervised.Store(supervisionSupported())
}

// Supervised reports whether Run interposes a supervisor, that is whether
// Init was called on a platform that supports one (Linux).
func Supervised() bool { return supervised.Load() }

// wireSpec travels from Run to the supervisor and from the supervisor to the
// confine helper, gob-encoded on an inherited pipe: unlike JSON, gob keeps
// strings that are not UTF-8 byte for byte.
type wireSpec struct {
	Argv           []string
	Env            []string
	Dir            string
	Confine        string
	ConfinePayload []byte
	KeepTmp        []string
	// ExtraFDs is how many descriptors the supervisor inherited after its
	// own (from fdExtra on) to pass to the command from 3 on.
	ExtraFDs  int
	TermBelow int
	Limits    shared.Limits
}

// wireStatus travels from the supervisor back to Run.
// The supervisor writes it once at the end; before that, for an isolated
// helper, a line with only InitPid, so that Run can kill the namespace at the
// deadline without waiting for the supervisor to be scheduled.
type wireStatus struct {
	InitPid    int    `json:"init_pid,omitempty"`
	ExitCode   int    `json:"exit_code"`
	Signal     string `json:"signal,omitempty"`
	SetupError string `json:"setup_error,omitempty"`
	Isolated   bool   `json:"isolated,omitempty"`
	// IsolationError says why the helper got no namespaces, if it asked.
	IsolationError string `json:"isolation_error,omitempty"`
	// Left are the files the run left in its private /tmp (KeepTmp).
	Left []LeftFile `json:"left,omitempty"`
}
