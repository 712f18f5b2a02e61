package runner

import (
	"context"
	"fmt"

	"github.com/skillhost/skillhost/shared"
)

// SpecFor is the Spec that runs req as the contract describes it: its
// argv, directory, environment, timeout, kill grace and output limit. A
// confining backend adds its confiner and payload.
func SpecFor(req shared.Request) Spec {
	return Spec{
		Argv:        req.Argv,
		Dir:         req.Dir,
		Env:         req.Env,
		Timeout:     req.Grant.Timeout,
		KillGrace:   req.KillGrace,
		OutputLimit: req.OutputLimit,
	}
}

// Execute runs spec and reports it as the contract's Result. If emit fails
// (the caller went away), the command is stopped and Execute returns that
// error. A confined spec whose namespaces the kernel refused says so in
// Result.NotEnforced.
func Execute(ctx context.Context, spec Spec, emit func([]byte) error) (shared.Result, error) {
	return execute(ctx, std, spec, emit)
}

func execute(ctx context.Context, r *Runner, spec Spec, emit func([]byte) error) (shared.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var emitErr error
	res, err := r.Run(ctx, spec, func(b []byte) {
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
	if spec.Confine != "" && r.Isolates(spec.Confine) && !res.Isolated {
		why := res.IsolationError
		if why == "" {
			why = "the kernel refused them"
		}
		out.NotEnforced = append(out.NotEnforced, "private PID and mount namespaces ("+why+"): the backend fell back to its weaker protections for this run")
	}
	return out, nil
}
