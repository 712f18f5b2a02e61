package backend

import (
	"context"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/wire"
)

// drainTimeout bounds how long a plugin whose host died waits for its
// running commands to be torn down before it exits.
const drainTimeout = 3 * time.Second

var logger = hclog.New(&hclog.LoggerOptions{
	Name:       "sandbox",
	JSONFormat: true,
	Output:     os.Stderr,
	Level:      hclog.LevelFromString(os.Getenv(shared.EnvLogLevel)),
})

// Logger returns the plugin's logger. Plugins must log only through it: it
// writes JSON to stderr, which the host re-logs at the right level, while
// anything printed to stdout before the handshake would break it.
func Logger() hclog.Logger { return logger }

// Serve runs impl as a sandbox plugin and never returns. Call it first thing
// in main: it also dispatches the helper processes of package runner, and
// it must be the first thing to write to stdout.
func Serve(impl shared.Executor) {
	if fd, err := strconv.Atoi(os.Getenv(shared.EnvTLSFD)); err == nil && fd >= 3 {
		closeOnExec(fd) // commands must never inherit the plugin's key
	}
	base, cancel := context.WithCancel(context.Background())
	watchLifeline(cancel, impl)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: wire.VersionedPlugins(impl, base),
		GRPCServer:       wire.NewGRPCServer,
		TLSProvider:      wire.ServerTLS,
		Logger:           logger,
	})
	closeImpl(impl)
	os.Exit(0)
}

// closeImpl gives a backend that implements io.Closer the chance to clean
// up (leftover cgroups, temporary files) before the plugin exits.
func closeImpl(impl shared.Executor) {
	if c, ok := impl.(io.Closer); ok {
		if err := c.Close(); err != nil {
			logger.Warn("close", "error", err)
		}
	}
}

// watchLifeline exits the plugin when the host's end of the lifeline pipe
// closes: first cancelling every running call, so their commands are killed,
// then exiting once they are done or drainTimeout has passed.
func watchLifeline(cancel context.CancelFunc, impl shared.Executor) {
	fd, err := strconv.Atoi(os.Getenv(shared.EnvLifelineFD))
	if err != nil || fd < 3 {
		return
	}
	closeOnExec(fd) // commands must not hold the host's lifeline
	f := os.NewFile(uintptr(fd), "lifeline")
	go func() {
		_, _ = io.Copy(io.Discard, f)
		logger.Info("host is gone; stopping")
		cancel()
		done := make(chan struct{})
		go func() { wire.Inflight.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(drainTimeout):
		}
		closeImpl(impl)
		os.Exit(0)
	}()
}
