// Package serving is what package backend's Serve and package kit's
// ServeFastPath share: serving the one-shot fast path, the logger a call's
// context carries, and stopping a backend. It is internal so that none of
// it becomes SDK API.
package serving

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/wire"
)

// ServeOneShot serves impl over the two pipes a one-shot host passed
// (wire.EnvPipe: a `skillhost run` from a shell makes a single call, and
// skips go-plugin's socket, mutual TLS and gRPC; docs/contract.md §8), and
// reports false at once when the host did not ask for it. The calls reach
// impl through the same serving code as over gRPC. It returns once the
// host has closed its end (done, or dead) and the calls still running
// were cancelled and given drainTimeout to stop their commands.
func ServeOneShot(impl shared.Executor, logger hclog.Logger) (bool, error) {
	v, ok := os.LookupEnv(wire.EnvPipe)
	if !ok {
		return false, nil
	}
	// Nothing this process starts may see it, or the pipes.
	os.Unsetenv(wire.EnvPipe)
	in, out, err := wire.ParsePipeEnv(v)
	if err != nil {
		// The host starts the plugin another way (its own binary, or
		// over go-plugin) instead.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	CloseOnExec(in)
	CloseOnExec(out)
	// The calls through the poller, so waiting for the host holds no
	// thread in a system call (docs/performance.md, the warm path). The
	// answers stay blocking: a full pipe then blocks the writer in the
	// kernel instead of a round through the poller, 4 % of the CPU of
	// 100 MiB of output.
	in = pollable(in)
	base, cancel := context.WithCancel(context.Background())
	err = wire.ServePipe(base, Logged(impl, logger), os.NewFile(uintptr(in), "host-calls"), os.NewFile(uintptr(out), "host-answers"))
	if err != nil {
		logger.Error("one-shot pipe", "error", err)
	}
	cancel()
	Drain()
	return true, CloseBackend(impl, logger)
}

// drainTimeout bounds how long a plugin whose host is gone waits for its
// running commands to be torn down before it exits.
const drainTimeout = 3 * time.Second

// Drain waits for the calls still running, cancelled by now, to tear
// their commands down, for at most drainTimeout.
func Drain() {
	done := make(chan struct{})
	go func() { wire.Inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainTimeout):
	}
}

// CloseBackend gives a backend that implements io.Closer the chance to
// clean up (leftover cgroups, temporary files) before the plugin exits.
func CloseBackend(impl shared.Executor, log hclog.Logger) error {
	if c, ok := impl.(io.Closer); ok {
		if err := c.Close(); err != nil {
			log.Warn("close", "error", err)
			return err
		}
	}
	return nil
}
