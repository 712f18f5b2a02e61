// Command skillhost-sandbox-echo is a complete, minimal sandbox plugin and a
// template for a real backend. It confines nothing: it logs each command it
// is asked to run (the "echo"), then runs it with the shared runner, which
// gives it the same timeout, output cap, environment and process-tree
// teardown as every other backend. Its Info claims only what that runner
// keeps, timeouts, so the conformance and escape suites hold it to exactly
// that.
//
// Build it under its plugin name and put it where skillhost looks:
//
//	go build -o bin/skillhost-sandbox-echo ./examples/plugin-echo
//	bin/skillhost run --strategy echo csv-summary summarize -- data.csv
package main

import (
	"context"
	"runtime"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend"
)

type echo struct{}

// Info names the backend and says what it enforces: timeouts, and nothing
// else.
func (echo) Info(context.Context) (shared.Info, error) {
	return shared.Info{
		Name:             "echo",
		Version:          "1.1.0",
		ContractVersions: []int{shared.ContractVersion},
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		Enforces:         shared.Enforcement{Timeout: true},
	}, nil
}

// Probe says whether the backend works on this machine. A real backend
// checks its kernel features or tools here.
func (echo) Probe(context.Context) (shared.Probe, error) {
	return shared.Probe{Status: shared.Healthy, Reason: "passthrough: logs and runs commands unconfined"}, nil
}

// Execute logs the request and runs it. A real backend would restrict the
// command here: wrap its argv (as the Seatbelt plugin does) or name a
// runner confiner in the spec (as the Landlock plugin does).
func (echo) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	backend.LoggerFrom(ctx).Info("run", "id", req.RunID, "argv", req.Argv, "dir", req.Dir,
		"read", req.Grant.FSRead, "write", req.Grant.FSWrite, "network", req.Grant.Network, "timeout", req.Grant.Timeout)
	return backend.Run(ctx, backend.SpecFor(req), emit)
}

func main() { backend.Serve(echo{}) }
