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

// Execute is Run for a backend: it runs spec and returns Run's Result,
// the contract's. If emit fails (the caller went away), the command is
// stopped and Execute returns that error. A confined spec whose namespaces
// the kernel refused says so in Result.NotEnforced.
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
	return res, nil
}
