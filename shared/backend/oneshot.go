package backend

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/wire"
)

// WithoutFastPath serves over go-plugin only, as a plugin built before the
// one-shot fast path did: a host that asks for the fast path gets a failed
// start and launches the plugin over go-plugin instead. Tests of a host's
// fallback use it; a backend has no other reason to.
func WithoutFastPath() Option { return func(c *serveConfig) { c.noFastPath = true } }

// serveOneShot serves impl over the two pipes a one-shot host passed
// (wire.EnvPipe: a `skillhost run` from a shell makes a single call, and
// skips go-plugin's socket, mutual TLS and gRPC; docs/contract.md §8), and
// reports false at once when the host did not ask for it. The calls reach
// impl through the same serving code as over gRPC. It returns once the
// host has closed its end (done, or dead) and the calls still running
// were cancelled and given drainTimeout to stop their commands.
func serveOneShot(impl shared.Executor, logger hclog.Logger) (bool, error) {
	v, ok := os.LookupEnv(wire.EnvPipe)
	if !ok {
		return false, nil
	}
	// Nothing this process starts may see it, or the pipes.
	os.Unsetenv(wire.EnvPipe)
	in, out, err := wire.ParsePipeEnv(v)
	if err != nil {
		// The host starts this plugin over go-plugin instead.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	closeOnExec(in)
	closeOnExec(out)
	// The calls through the poller, so waiting for the host holds no
	// thread in a system call (docs/performance.md, the warm path). The
	// answers stay blocking: a full pipe then blocks the writer in the
	// kernel instead of a round through the poller, 4 % of the CPU of
	// 100 MiB of output.
	in = pollable(in)
	base, cancel := context.WithCancel(context.Background())
	err = wire.ServePipe(base, withLogger(impl, logger), os.NewFile(uintptr(in), "host-calls"), os.NewFile(uintptr(out), "host-answers"))
	if err != nil {
		logger.Error("one-shot pipe", "error", err)
	}
	cancel()
	drain()
	return true, closeImpl(impl, logger)
}
