package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend/internal/serving"
	"github.com/skillhost/skillhost/shared/internal/pluginset"
	"github.com/skillhost/skillhost/shared/internal/wire"
)

// Option configures Serve.
type Option func(*serveConfig)

type serveConfig struct {
	logger       hclog.Logger
	debug        bool
	out          io.Writer // where debug mode prints how to attach
	noFastPath   bool
	oneProcessor bool // WithOneProcessor
}

// WithLogger makes l the plugin's logger (see LoggerFrom) instead of the
// default: JSON on stderr at the host's level.
func WithLogger(l hclog.Logger) Option { return func(c *serveConfig) { c.logger = l } }

// WithoutFastPath serves over go-plugin only, as a plugin built before the
// one-shot fast path did: a host that asks for the fast path gets a failed
// start and launches the plugin over go-plugin instead. Tests of a host's
// fallback use it; a backend has no other reason to.
func WithoutFastPath() Option { return func(c *serveConfig) { c.noFastPath = true } }

// WithDebug serves in debug mode (as SKILLHOST_PLUGIN_DEBUG=1 does): see
// Serve.
func WithDebug() Option { return func(c *serveConfig) { c.debug = true } }

// Logger returns a new default logger.
//
// Deprecated: use LoggerFrom with the call's context, which has the
// logger Serve was given.
func Logger() hclog.Logger { return serving.NewLogger() }

// Serve runs impl as a sandbox plugin until the host is done with it, then
// calls impl's Close if it is an io.Closer and returns Close's error.
// Call it from main; a binary that is not started by a host is told so and
// exits.
//
// A host that makes a single call (`skillhost run` from a shell) may start
// the plugin for the one-shot fast path instead of go-plugin: two pipes
// carrying the contract's own messages, no socket, TLS or gRPC
// (docs/contract.md §8). Serve answers it through the same methods, so a
// backend sees no difference.
//
// The runner's helper processes (supervisors, confine helpers) are this
// binary re-executed: what main does before Serve runs in each of them
// too, so keep it to what they need (making the backend's runner, see
// NewRunner). Package runner dispatches the helpers before main, or, for a
// confiner, in runner.New.
//
// # Debug mode
//
// Started by hand with SKILLHOST_PLUGIN_DEBUG=1 in its environment (or
// with WithDebug), for instance under a debugger, the plugin serves
// without a host: it prints to stdout a line setting
// SKILLHOST_PLUGIN_REATTACH, and a host started with that variable in its
// environment attaches to this process instead of starting the plugin's
// binary. The plugin then serves until interrupted (Ctrl-C); a host's
// Close leaves it running for the next.
func Serve(impl shared.Executor, opts ...Option) error {
	cfg := serveConfig{out: os.Stdout}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = serving.NewLogger()
	}
	if os.Getenv(shared.EnvPluginDebug) == "1" {
		cfg.debug = true
	}
	if cfg.oneProcessor {
		useOneProcessor()
	}
	if !cfg.noFastPath && !cfg.debug {
		if served, err := serving.ServeOneShot(impl, cfg.logger); served {
			return err
		}
	}
	if fd, err := strconv.Atoi(os.Getenv(shared.EnvTLSFD)); err == nil && fd >= 3 {
		serving.CloseOnExec(fd) // commands must never inherit the plugin's key
	}
	served := serving.Logged(impl, cfg.logger)
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := &plugin.ServeConfig{
		HandshakeConfig:  pluginset.Handshake,
		VersionedPlugins: pluginset.Versioned(served, base),
		GRPCServer:       pluginset.NewGRPCServer,
		TLSProvider:      wire.ServerTLS,
		Logger:           cfg.logger,
	}
	if cfg.debug {
		return serveDebug(base, impl, sc, cfg)
	}
	watchLifeline(cancel, impl, cfg.logger)
	plugin.Serve(sc)
	return serving.CloseBackend(impl, cfg.logger)
}

// serveDebug serves sc in go-plugin's test mode and prints how a host
// attaches, until SIGINT or SIGTERM.
func serveDebug(base context.Context, impl shared.Executor, sc *plugin.ServeConfig, cfg serveConfig) error {
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()
	info, err := impl.Info(WithLoggerContext(ctx, cfg.logger))
	if err != nil {
		return fmt.Errorf("debug mode: the backend's Info: %w", err)
	}
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	sc.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}
	go plugin.Serve(sc)
	select {
	case rc := <-reattach:
		line, err := ReattachLine(info.Name, rc)
		if err != nil {
			return err
		}
		fmt.Fprintf(cfg.out, "skillhost plugin %q is serving in debug mode (pid %d). To attach a host, start it with:\n\n\t%s\n\n", info.Name, os.Getpid(), line)
	case <-closed:
		return serving.CloseBackend(impl, cfg.logger)
	}
	<-closed
	return serving.CloseBackend(impl, cfg.logger)
}

// reattachAddr is a net.Addr as JSON.
type reattachAddr struct {
	Network string
	String  string
}

// reattachJSON is one plugin's entry of SKILLHOST_PLUGIN_REATTACH.
type reattachJSON struct {
	Protocol        string
	ProtocolVersion int
	Pid             int
	Test            bool
	Addr            reattachAddr
}

// ReattachLine is the shell assignment of SKILLHOST_PLUGIN_REATTACH that
// attaches a host to the plugin called name served at rc.
func ReattachLine(name string, rc *plugin.ReattachConfig) (string, error) {
	doc, err := json.Marshal(map[string]reattachJSON{name: {
		Protocol: string(rc.Protocol), ProtocolVersion: rc.ProtocolVersion, Pid: rc.Pid, Test: rc.Test,
		Addr: reattachAddr{Network: rc.Addr.Network(), String: rc.Addr.String()},
	}})
	if err != nil {
		return "", err
	}
	return shared.EnvPluginReattach + "='" + string(doc) + "'", nil
}

// watchLifeline exits the plugin when the host's end of the lifeline pipe
// closes: first cancelling every running call, so their commands are killed,
// then exiting once they are done or drainTimeout has passed.
func watchLifeline(cancel context.CancelFunc, impl shared.Executor, log hclog.Logger) {
	fd, err := strconv.Atoi(os.Getenv(shared.EnvLifelineFD))
	if err != nil || fd < 3 {
		return
	}
	serving.CloseOnExec(fd) // commands must not hold the host's lifeline
	f := os.NewFile(uintptr(fd), "lifeline")
	go func() {
		_, _ = io.Copy(io.Discard, f)
		log.Info("host is gone; stopping")
		cancel()
		serving.Drain()
		_ = serving.CloseBackend(impl, log)
		os.Exit(0)
	}()
}
