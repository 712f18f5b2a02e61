package sandbox

import (
	"context"
	"fmt"
	"runtime"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/runner"
)

// The built-in strategies.
const (
	Null     = "null"
	Landlock = "landlock"
	Seatbelt = "seatbelt"
	Auto     = "auto"
	// InProcess runs scripts from the host process itself (sandbox.enabled:
	// false, or --strategy none): the same bounds, no confinement.
	InProcess = "none"
)

// AutoFor returns the plugin "auto" picks on goos: Seatbelt on macOS,
// Landlock on Linux, and null elsewhere, where confine is false because
// nothing confines the scripts.
func AutoFor(goos string) (name string, confine bool) {
	switch goos {
	case "darwin":
		return Seatbelt, true
	case "linux":
		return Landlock, true
	}
	return Null, false
}

// Choice is the strategy of one run.
type Choice struct {
	// Name is the plugin's name, or InProcess.
	Name string
	// Confines says whether the strategy confines scripts: every plugin
	// does but null, and the in-process runner never does.
	Confines bool
	// Auto says Name was resolved from "auto"; with Confines false that
	// means no confining plugin exists for this platform.
	Auto bool
	// ByName says the run's network is by name (its grant names hosts):
	// a one-shot host then starts the plugin's own binary, not its binary
	// for one-shot hosts, which need not carry the egress proxy.
	ByName bool
}

// Policy is what the configuration says about strategies.
type Policy struct {
	// Enabled is sandbox.enabled: false means the in-process runner.
	Enabled bool
	// Strategy is sandbox.strategy: "auto" or a plugin's name.
	Strategy string
}

// Choose names the strategy of a run: override if set (--strategy), else
// the in-process runner when the sandbox is disabled, else null for an
// honoured trust: core, else the configured one; auto means the platform's
// plugin.
func Choose(p Policy, override string, core bool) Choice {
	name := override
	if name == "" {
		if !p.Enabled {
			return Choice{Name: InProcess}
		}
		name = p.Strategy
		if core {
			name = Null
		}
	}
	if name == Auto {
		name, confine := AutoFor(runtime.GOOS)
		return Choice{Name: name, Confines: confine, Auto: true}
	}
	return Choice{Name: name, Confines: name != Null && name != InProcess}
}

// ExecutorFor returns the executor of c: the in-process runner, or the
// plugin's (started on first use).
func (m *Manager) ExecutorFor(c Choice) shared.Executor {
	if c.Name == InProcess {
		return inProcess{version: m.opts.HostVersion, runner: m.inProcessRunner()}
	}
	return &managed{m: m, name: c.Name, byName: c.ByName}
}

// inProcess runs scripts from the host process itself, through the same
// supervised runner as the plugins (time, output and environment bounds)
// but with no confinement. It is the one place the host runs a script
// without a plugin, and why host/sandbox imports shared/runner.
type inProcess struct {
	version string
	runner  *runner.Runner
}

func (p inProcess) Info(context.Context) (shared.Info, error) {
	return shared.Info{
		Name:             InProcess,
		Version:          p.version,
		ContractVersions: []int{shared.ContractVersion},
		Platform:         fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
		Enforces:         shared.Enforcement{Timeout: true},
	}, nil
}

func (inProcess) Probe(context.Context) (shared.Probe, error) {
	return shared.Probe{Status: shared.Healthy, Reason: "runs scripts unconfined (sandbox.enabled is false)"}, nil
}

func (p inProcess) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	return p.runner.Execute(ctx, runner.SpecFor(req), emit)
}
