package backend

import (
	"context"
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/runner"
)

// SpecFor returns the runner spec that runs req with the contract's bounds:
// its argv, directory and environment, the grant's timeout, the kill grace
// and the output limit. Backends adjust it (wrap the argv, name a confiner)
// and pass it to Run.
func SpecFor(req shared.Request) runner.Spec {
	return runner.Spec{
		Argv:        req.Argv,
		Dir:         req.Dir,
		Env:         req.Env,
		Timeout:     req.Grant.Timeout,
		KillGrace:   req.KillGrace,
		OutputLimit: req.OutputLimit,
	}
}

// Run runs spec with package runner and converts the outcome. If emit fails
// (the host went away), the command is stopped and Run returns that error.
func Run(ctx context.Context, spec runner.Spec, emit func([]byte) error) (shared.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var emitErr error
	res, err := runner.Run(ctx, spec, func(b []byte) {
		if emitErr != nil {
			return
		}
		if emitErr = emit(b); emitErr != nil {
			cancel()
		}
	})
	if err != nil {
		return shared.Result{}, err
	}
	if emitErr != nil {
		return shared.Result{}, fmt.Errorf("stream output: %w", emitErr)
	}
	out := shared.Result{
		ExitCode:  res.ExitCode,
		Signal:    res.Signal,
		TimedOut:  res.TimedOut,
		Truncated: res.Truncated,
		Duration:  res.Duration,
	}
	if spec.Confine != "" && runner.Isolates(spec.Confine) && !res.Isolated {
		why := res.IsolationError
		if why == "" {
			why = "the kernel refused them"
		}
		out.NotEnforced = append(out.NotEnforced, "private PID and mount namespaces ("+why+"): the backend fell back to its weaker protections for this run")
	}
	return out, nil
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
