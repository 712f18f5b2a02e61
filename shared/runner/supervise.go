package runner

import (
	"fmt"
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

// Confiner restricts the calling process (for example with Landlock or
// seccomp) just before it execs the command. It runs in a fresh, single-use
// process on a locked OS thread, after the working directory is set; it must
// not start goroutines that outlive it. An error aborts the run and is
// reported to Run's caller as a setup error.
type Confiner func(payload []byte) error

// Preparer does, ahead of time, the slow part of confining a command that
// does not depend on it (joining a cgroup, say). It runs in the confine
// helper as soon as the helper starts, usually long before a command
// arrives, on the thread that will run the Confiner. It must not fail: what
// it could not do, the Confiner does or reports.
type Preparer func()

var (
	supervised atomic.Bool

	confinersMu sync.RWMutex
	confiners   = map[string]Confiner{}
	preparers   = map[string]Preparer{}
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
// confine helper, as JSON on an inherited pipe.
type wireSpec struct {
	Argv           []string `json:"argv"`
	Env            []string `json:"env"`
	Dir            string   `json:"dir,omitempty"`
	Confine        string   `json:"confine,omitempty"`
	ConfinePayload []byte   `json:"confine_payload,omitempty"`
}

// wireStatus travels from the supervisor back to Run.
type wireStatus struct {
	ExitCode   int    `json:"exit_code"`
	Signal     string `json:"signal,omitempty"`
	SetupError string `json:"setup_error,omitempty"`
}
