package host

import (
	"context"
	"fmt"
	"runtime"

	"github.com/skillhost/skillhost/shared"
)

// inProcess runs scripts from the host process itself, with the same time,
// output and environment bounds as the plugins but no confinement. It
// serves sandbox.enabled: false.
type inProcess struct{}

// InProcessName is the strategy name reported for sandbox.enabled: false.
const InProcessName = "none"

func (inProcess) Info(context.Context) (shared.Info, error) {
	return shared.Info{
		Name:             InProcessName,
		Version:          Version,
		ContractVersions: []int{shared.ContractVersion},
		Platform:         fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
		Enforces:         shared.Enforcement{Timeout: true},
	}, nil
}

func (inProcess) Probe(context.Context) (shared.Probe, error) {
	return shared.Probe{Status: shared.Healthy, Reason: "runs scripts unconfined (sandbox.enabled is false)"}, nil
}

func (inProcess) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	return shared.Run(ctx, shared.SpecFor(req), emit)
}

// executor picks the executor for a run. Until sandbox plugins exist,
// everything runs in-process.
func (h *Host) executor(ctx context.Context, g interface{ Core() bool }, override string) (shared.Executor, string, error) {
	return inProcess{}, InProcessName, nil
}
