package backend

import (
	"context"
	"strings"

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

// WithEnv returns env with name set to value, replacing an earlier entry.
func WithEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}
