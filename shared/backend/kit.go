package backend

import (
	"context"
	"io"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend/kit"
	"github.com/skillhost/skillhost/shared/runner"
)

// What a backend's calls use lives in package kit, which links no
// go-plugin (a backend's one-shot binary is built on it); these are the
// same functions under this package's name.

// SpecFor is runner.SpecFor: the Spec that runs req.
func SpecFor(req shared.Request) runner.Spec { return kit.SpecFor(req) }

// Run is runner.Execute: it runs spec and returns the contract's Result,
// to which a backend adds what it knows (violations, NotEnforced). If emit
// fails (the host went away), the command is stopped and Run returns that
// error.
func Run(ctx context.Context, spec runner.Spec, emit func([]byte) error) (shared.Result, error) {
	return kit.Run(ctx, spec, emit)
}

// WithEnv is shared.WithEnv: env with name set to value.
func WithEnv(env []string, name, value string) []string { return kit.WithEnv(env, name, value) }

// NewRunner is kit.NewRunner (see there).
func NewRunner(opts ...runner.Option) *runner.Runner { return kit.NewRunner(opts...) }

// Output is emit as an io.Writer (see kit.Output).
func Output(emit func([]byte) error) io.Writer { return kit.Output(emit) }

// DecodeConfig is kit.DecodeConfig: doc decoded into v strictly, an
// unknown key or a value of the wrong type a problem named by its key.
func DecodeConfig(doc []byte, v any) []shared.ConfigProblem { return kit.DecodeConfig(doc, v) }

// WithLoggerContext returns ctx carrying l, for LoggerFrom.
func WithLoggerContext(ctx context.Context, l hclog.Logger) context.Context {
	return kit.WithLoggerContext(ctx, l)
}

// LoggerFrom returns the plugin's logger from a call's context: Serve puts
// it in the context of every Info, Probe, SetConfig, Explain and Execute.
// Outside a call (a test calling the backend directly) it is a new
// default logger. Plugins must log only through it: stdout belongs to the
// handshake.
func LoggerFrom(ctx context.Context) hclog.Logger { return kit.LoggerFrom(ctx) }
