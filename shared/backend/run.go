package backend

import (
	"context"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/runner"
)

// SpecFor is runner.SpecFor: the Spec that runs req.
func SpecFor(req shared.Request) runner.Spec { return runner.SpecFor(req) }

// Run is runner.Execute: it runs spec and converts the outcome. If emit
// fails (the host went away), the command is stopped and Run returns that
// error.
func Run(ctx context.Context, spec runner.Spec, emit func([]byte) error) (shared.Result, error) {
	return runner.Execute(ctx, spec, emit)
}

// WithEnv is shared.WithEnv: env with name set to value.
func WithEnv(env []string, name, value string) []string { return shared.WithEnv(env, name, value) }
