package kit

import (
	"context"
	"io"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/runner"
)

// SpecFor is runner.SpecFor: the Spec that runs req.
func SpecFor(req shared.Request) runner.Spec { return runner.SpecFor(req) }

// Run is runner.Execute: it runs spec and returns the contract's Result,
// to which a backend adds what it knows (violations, NotEnforced). If emit
// fails (the host went away), the command is stopped and Run returns that
// error.
func Run(ctx context.Context, spec runner.Spec, emit func([]byte) error) (shared.Result, error) {
	return runner.Execute(ctx, spec, emit)
}

// WithEnv is shared.WithEnv: env with name set to value.
func WithEnv(env []string, name, value string) []string { return shared.WithEnv(env, name, value) }

// NewRunner is runner.New with opts (which keeps no spare supervisor in a
// plugin that serves a one-shot host): a backend that needs a runner of
// its own (for its confiner) makes it with this, first thing, since the
// runner's helper processes are the plugin re-executed (see
// runner.WithConfiner).
func NewRunner(opts ...runner.Option) *runner.Runner { return runner.New(opts...) }

// Output is emit as an io.Writer, to plug into an exec.Cmd or a logger
// that streams the command's output: each Write passes p on before it
// returns, and fails as emit does (the host went away).
func Output(emit func([]byte) error) io.Writer { return emitWriter(emit) }

type emitWriter func([]byte) error

func (w emitWriter) Write(p []byte) (int, error) {
	if err := w(p); err != nil {
		return 0, err
	}
	return len(p), nil
}
