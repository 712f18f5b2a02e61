// Package null is the passthrough sandbox backend: it runs commands
// unconfined, still bounded by the timeout and the output limit. It is the
// reference implementation of the shared.Executor contract, and what
// skills with an honoured trust: core run under.
package null

import (
	"context"
	"fmt"
	"runtime"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend/kit"
)

// Version is the backend's version.
const Version = "0.1.0"

// Executor is the null backend.
type Executor struct{}

// New returns the null backend.
func New() *Executor { return &Executor{} }

// Info implements shared.Executor. It claims timeouts and nothing else: the
// null backend confines nothing, and its runs share every namespace of the
// host (Isolation's zero value).
func (*Executor) Info(context.Context) (shared.Info, error) {
	return shared.Info{
		Name:             "null",
		Version:          Version,
		ContractVersions: []int{shared.ContractVersion},
		Platform:         fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
		Enforces:         shared.Enforcement{Timeout: true},
	}, nil
}

// Probe implements shared.Executor; the null backend works everywhere.
func (*Executor) Probe(context.Context) (shared.Probe, error) {
	return shared.Probe{Status: shared.Healthy, Reason: "passthrough: enforces timeouts and output limits, no confinement"}, nil
}

// Execute implements shared.Executor.
func (*Executor) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	res, err := kit.Run(ctx, kit.SpecFor(req), emit)
	if err != nil {
		return res, err
	}
	res.NotEnforced = notEnforced(req)
	return res, nil
}

// notEnforced lists what a best-effort caller asked for and did not get.
func notEnforced(req shared.Request) []string {
	if !req.BestEffort || req.Grant.Trust == shared.TrustCore {
		return nil
	}
	return []string{"filesystem confinement", "network confinement", "resource limits"}
}
