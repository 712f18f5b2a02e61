package runner

import (
	"context"
	"os"
	"sync/atomic"

	"github.com/skillhost/skillhost/shared"
)

// Runner runs commands (Run, Execute) and keeps, unless told not to, a
// supervisor started ahead of time for the next one, per confiner. Its
// settings are its own: two runners in one program can differ. The zero
// value is not usable; call New.
type Runner struct {
	noSpares atomic.Bool
	spares   pool
	confs    map[string]Confinement
	// exe is the lean supervisor binary to start (WithSupervisor); nil
	// means the one the host handed this process, if any, else this
	// program re-executed.
	exe *supervisorExe
}

// Option configures a Runner made by New.
type Option func(*Runner)

// WithoutSpares makes a runner that keeps no spare supervisor: for a
// program that will run one command and exit (a plugin serving a one-shot
// `skillhost run`), where the spare would cost as much as the command's
// own supervisor and never be used.
func WithoutSpares() Option { return func(r *Runner) { r.noSpares.Store(true) } }

// WithSpares sets whether the runner keeps spares (the default).
func WithSpares(keep bool) Option { return func(r *Runner) { r.noSpares.Store(!keep) } }

// New returns a runner with opts applied. It keeps spares unless told not
// to, or unless this process is a plugin serving a one-shot host
// (shared.EnvOneShot), where the spare would cost as much as the command's
// own supervisor and never be used. In a process started as the
// supervisor or confine helper of one of its confiners, New does that job
// and exits (see WithConfiner).
func New(opts ...Option) *Runner {
	r := &Runner{}
	r.noSpares.Store(os.Getenv(shared.EnvOneShot) == "1")
	for _, o := range opts {
		o(r)
	}
	r.dispatch()
	return r
}

// Close stops the spare supervisors waiting for a next command and undoes
// what their confiner's Preparer did, and keeps the runner from starting
// more; a program about to exit calls it to leave nothing behind. The
// runner still runs commands after Close.
func (r *Runner) Close() error {
	r.noSpares.Store(true)
	r.spares.drop()
	return nil
}

func (r *Runner) keepSpares() bool { return !r.noSpares.Load() }

// Execute is the package's Execute with this runner.
func (r *Runner) Execute(ctx context.Context, spec Spec, emit func([]byte) error) (shared.Result, error) {
	return execute(ctx, r, spec, emit)
}

// std is the runner of the package-level Run and Execute, for programs
// that need only one and no confiner.
var std = New()

// KeepSpares sets whether the package-level Run and Execute keep spares.
//
// Deprecated: it changes a runner the whole program shares; make a Runner
// of its own with New(WithoutSpares()) instead.
func KeepSpares(keep bool) {
	if keep {
		std.noSpares.Store(false)
		return
	}
	_ = std.Close()
}
