// Command skillhost-sandbox-echo is a complete, minimal sandbox plugin. It
// runs nothing: it reports the command it was asked to run and the grant it
// would run it under, which makes it a handy dry run ("what would skillhost
// execute?") and a template for a real backend.
//
// Build it under its plugin name and put it where skillhost looks:
//
//	go build -o bin/skillhost-sandbox-echo ./examples/plugin-echo
//	bin/skillhost run --strategy echo csv-summary summarize -- data.csv
package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

type echo struct{}

// Info names the backend and says what it enforces. A dry run never
// overruns its timeout, and nothing else applies.
func (echo) Info(context.Context) (shared.Info, error) {
	return shared.Info{
		Name:             "echo",
		Version:          "1.0.0",
		ContractVersions: []int{shared.ContractVersion},
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		Enforces:         shared.Enforcement{Timeout: true},
	}, nil
}

// Probe says whether the backend works on this machine; a dry run always
// does. A real backend checks its kernel features or tools here.
func (echo) Probe(context.Context) (shared.Probe, error) {
	return shared.Probe{Status: shared.Healthy, Reason: "dry run: reports commands instead of running them"}, nil
}

// Execute streams its report through emit and returns a result. A real
// backend would build a runner.Spec with shared.SpecFor(req), confine it,
// and call shared.Run(ctx, spec, emit).
func (echo) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	shared.Logger().Info("dry run", "run", req.RunID, "argv", req.Argv)
	g := req.Grant
	report := fmt.Sprintf("would run: %s\n  in: %s\n  read: %s\n  write: %s\n  network: %v, timeout: %s, trust: %s\n",
		strings.Join(req.Argv, " "), req.Dir, strings.Join(g.FSRead, " "), strings.Join(g.FSWrite, " "),
		g.Network, g.Timeout, g.Trust)
	if err := emit([]byte(report)); err != nil {
		return shared.Result{}, err
	}
	return shared.Result{ExitCode: 0}, nil
}

func main() { shared.Serve(echo{}) }
