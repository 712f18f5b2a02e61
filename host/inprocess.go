package host

import (
	"context"
	"fmt"
	"runtime"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend"
)

// inProcess runs scripts from the host process itself, with the same time,
// output and environment bounds as the plugins but no confinement. It
// serves sandbox.enabled: false.
type inProcess struct{}

// InProcessName is the strategy name reported for sandbox.enabled: false;
// --strategy none selects it for one run.
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
	return backend.Run(ctx, backend.SpecFor(req), emit)
}

// executor picks the executor for a run, names its strategy and reports
// whether that confines the script (see strategy).
func (h *Host) executor(g grant.Grant, override string) (ex shared.Executor, name string, confine bool) {
	name, confine, auto := h.strategy(override, g.Core())
	if name == InProcessName {
		return inProcess{}, InProcessName, false
	}
	if auto && !confine {
		h.Warn("no confining sandbox plugin exists for %s; scripts run unconfined under the null plugin, bounded only by timeout and output limit", runtime.GOOS)
	}
	return h.Sandbox().Executor(name), name, confine
}
