package pluginclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/pluginset"
	"github.com/skillhost/skillhost/shared/internal/wire"
)

// ErrCrashed matches the errors of calls that failed because the plugin
// process died (see CrashError).
var ErrCrashed = wire.ErrCrashed

// CrashError is the error of a call that failed because the plugin process
// died under it. It matches ErrCrashed; Detail is what gRPC said.
type CrashError = wire.CrashError

// LaunchConfig describes how to start a plugin binary.
type LaunchConfig struct {
	// Path is the plugin binary.
	Path string
	// Env is the plugin's whole environment; the host's is never
	// inherited. Launch adds the variables of the protocol itself.
	Env []string
	// AutoMTLS makes host and plugin authenticate each other with
	// throwaway Ed25519 certificates, so no other process can use the
	// plugin's socket (see internal/wire/mtls.go for why it is worth keeping and why it
	// is not go-plugin's own AutoMTLS). It costs well under a millisecond.
	AutoMTLS bool
	// StartTimeout bounds the handshake; zero means 10 s.
	StartTimeout time.Duration
	// Logger receives the plugin's logs; nil discards them.
	Logger hclog.Logger
	// OneShot tells the plugin the host will make a single call, so it
	// keeps nothing started ahead of time for a next one.
	OneShot bool
	// NoFastPath makes a OneShot launch use go-plugin all the same (to
	// measure or test the two side by side).
	NoFastPath bool
	// NoOneShotBinary makes a OneShot launch start the plugin's own
	// binary even where its binary for one-shot hosts (OneShotPath) is
	// beside it: a host sets it when it checked the plugin against a pin,
	// which covers the plugin's binary, not that one.
	NoOneShotBinary bool
	// SysProcAttr is applied to the plugin process (for example to run it
	// as another user); nil means none.
	SysProcAttr *syscall.SysProcAttr
	// Supervisor is the plugin's lean supervisor binary, open for reading,
	// handed to the plugin as an inherited descriptor (shared.EnvSupervisorFD;
	// Launch does not close it). Nil means the binary named
	// skillhost-supervisor-NAME beside a plugin named skillhost-sandbox-NAME,
	// if there is one (Companion); NoSupervisor means none: the plugin then
	// re-executes itself for each run's supervisor.
	Supervisor   *os.File
	NoSupervisor bool
	// Trace, when set, is called as each step of the start ends, with
	// the step's name (SKILLHOST_TRACE=timing); it may be called from
	// another goroutine. Nil costs nothing.
	Trace func(step string)
}

// Conn is a running plugin process and its Executor.
type Conn struct {
	shared.Executor
	client    *plugin.Client
	lifeline  *os.File
	socketDir string // private, 0700, holding the socket; removed by Close
	cmd       *exec.Cmd
	// oneShot: the host makes one call (LaunchConfig.OneShot); remote:
	// the plugin's Info said it runs commands elsewhere (see Execute).
	oneShot      bool
	remote       atomic.Bool
	lifelineOnce sync.Once
	// pipeDone closes when a plugin on the one-shot fast path has exited
	// (nil over go-plugin); pipeInfo is its answer to the first Info.
	pipeDone <-chan struct{}
	pipeInfo *shared.Info
	pipeOut  *os.File // the host's end of the answers pipe
	// exit answers Alive without reading /proc on every call.
	exit exitWatch
	// ContractVersion is the contract version negotiated with the plugin.
	ContractVersion int
}

// Launch starts the plugin at cfg.Path and completes the handshake. The
// plugin's socket lives in a fresh 0700 directory that Close removes, and
// the plugin watches a lifeline pipe, so it exits when this process dies,
// even by SIGKILL. With cfg.OneShot, Launch first tries the fast path
// (launchPipe: two pipes, no socket, TLS or gRPC), with the plugin's
// binary for one-shot hosts where there is one (OneShotPath) and then the
// plugin's own, and falls back to go-plugin for a plugin that does not
// speak it. When
// shared.EnvPluginReattach names the plugin, Launch attaches to that
// plugin, serving in debug mode, instead of starting it.
func Launch(cfg LaunchConfig) (*Conn, error) {
	if c, ok, err := reattached(cfg); ok {
		return c, err
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Supervisor == nil && !cfg.NoSupervisor {
		if f, err := Companion(cfg.Path); err == nil && f != nil {
			defer f.Close()
			cfg.Supervisor = f
		} else if err != nil {
			cfg.Logger.Warn("the plugin's supervisor binary cannot be used; its runs re-execute the plugin instead", "error", err)
		}
	}
	if cfg.OneShot && !cfg.NoFastPath {
		if lean := OneShotBinary(cfg.Path); lean != "" && !cfg.NoOneShotBinary {
			leanCfg := cfg
			leanCfg.Path = lean
			leanCfg.Env = oneProcessor(cfg.Env)
			c, err := launchPipe(leanCfg)
			if err == nil {
				return c, nil
			}
			cfg.Logger.Warn("the plugin's binary for one-shot hosts did not answer on the fast path; starting the plugin itself", "binary", lean, "error", err)
		}
		c, err := launchPipe(cfg)
		if err == nil {
			return c, nil
		}
		cfg.Logger.Debug("plugin does not speak the one-shot fast path; starting it over go-plugin", "error", err)
	}
	return launchGoPlugin(cfg)
}

// oneProcessor is env with GOMAXPROCS=1 unless it gives GOMAXPROCS a
// number of processors the runtime takes (shared.ProcessorsGiven; exec
// keeps the last of two values, so an ignored one is overridden). A binary for
// one-shot hosts serves one call that waits on processes and pipes
// (kit.UseOneProcessor); started on one processor, its runtime need not
// give the others back, which cost it about 0.8 ms of CPU. Its commands
// get their environment from the request, not from it.
func oneProcessor(env []string) []string {
	if shared.ProcessorsGiven(shared.EnvValue(env, "GOMAXPROCS")) {
		return env
	}
	return append(slices.Clone(env), "GOMAXPROCS=1")
}

// launchGoPlugin starts the plugin over go-plugin's socket and gRPC.
func launchGoPlugin(cfg LaunchConfig) (*Conn, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("lifeline: %w", err)
	}
	cmd := exec.Command(cfg.Path)
	cmd.Env = append(append([]string{}, cfg.Env...),
		shared.EnvLifelineFD+"=3",
		shared.EnvLogLevel+"="+levelName(cfg.Logger),
	)
	if cfg.OneShot {
		cmd.Env = append(cmd.Env, shared.EnvOneShot+"=1")
	}
	cmd.ExtraFiles = []*os.File{lifeR}
	cmd.SysProcAttr = cfg.SysProcAttr
	var tlsConfig *tls.Config
	if cfg.AutoMTLS {
		tlsR, client, err := sendTLS()
		if err != nil {
			lifeR.Close()
			lifeW.Close()
			return nil, err
		}
		defer tlsR.Close()
		tlsConfig = client
		if cfg.Trace != nil {
			cfg.Trace("plugin TLS identities (Ed25519 keys)")
			tlsConfig = tracedTLS(client, cfg.Trace)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, tlsR)
		cmd.Env = append(cmd.Env, shared.EnvTLSFD+"=4")
	}
	passSupervisor(cmd, cfg) // after the descriptors whose numbers the contract fixes
	c := &Conn{lifeline: lifeW, cmd: cmd, oneShot: cfg.OneShot}
	home := socketHome(socketBase())
	sweepSockets(home, max(cfg.StartTimeout, time.Minute))
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginset.Handshake,
		VersionedPlugins: pluginset.Versioned(nil, nil),
		// go-plugin makes the socket's private 0700 directory, names it in
		// the environment it hands over here, and removes it on Kill.
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: home},
		RunnerFunc: func(_ hclog.Logger, spec *exec.Cmd, dir string) (runner.Runner, error) {
			// Recorded first: if the plugin never starts, go-plugin's Kill
			// has no runner and leaves the directory, and Close removes it.
			c.socketDir = dir
			if err := giveTo(dir, cfg.SysProcAttr); err != nil {
				return nil, fmt.Errorf("socket directory: %w", err)
			}
			cmd.Env = append(cmd.Env, spec.Env...)
			r, err := newPluginRunner(cmd, c.exit.open)
			if err != nil || cfg.Trace == nil {
				return r, err
			}
			return &tracedRunner{pluginRunner: r, trace: cfg.Trace}, nil
		},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		TLSConfig:        tlsConfig,
		GRPCDialOptions:  wire.DialOptions(),
		SkipHostEnv:      true,
		StartTimeout:     cfg.StartTimeout,
		Logger:           cfg.Logger,
	})
	c.client = client
	rpc, err := client.Client()
	lifeR.Close()
	if err != nil {
		c.Close()
		if v := handshakeVersion(err); v >= 0 {
			err = &VersionError{Plugin: v, Err: err}
		}
		return nil, fmt.Errorf("start %s: %w", filepath.Base(cfg.Path), err)
	}
	raw, err := rpc.Dispense(shared.PluginName)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(cfg.Path), err)
	}
	ex, ok := raw.(shared.Executor)
	if !ok {
		c.Close()
		return nil, errors.New("plugin does not serve an Executor")
	}
	c.Executor = ex
	c.ContractVersion = client.NegotiatedVersion()
	if cfg.Trace != nil {
		cfg.Trace("plugin gRPC client (connection, stdio stream, dispense)")
	}
	return c, nil
}

// tracedRunner reports when the plugin process has been started and when
// its handshake line arrives (LaunchConfig.Trace).
type tracedRunner struct {
	*pluginRunner
	trace func(string)
	once  sync.Once
}

func (r *tracedRunner) Start(ctx context.Context) error {
	err := r.pluginRunner.Start(ctx)
	r.trace("plugin exec (socket directory, fork and exec)")
	return err
}

func (r *tracedRunner) Stdout() io.ReadCloser {
	return &tracedReader{ReadCloser: r.pluginRunner.Stdout(), first: func() {
		r.once.Do(func() { r.trace("plugin handshake (its start to its address line)") })
	}}
}

// tracedReader calls first when its first read returns.
type tracedReader struct {
	io.ReadCloser
	first func()
}

func (t *tracedReader) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.first()
	return n, err
}

// tracedTLS is c reporting the end of each TLS handshake it makes.
func tracedTLS(c *tls.Config, trace func(string)) *tls.Config {
	c = c.Clone()
	verify := c.VerifyConnection
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		trace("plugin TLS handshake")
		if verify != nil {
			return verify(cs)
		}
		return nil
	}
	return c
}

// sendTLS makes the identities of one plugin connection and returns the
// read end of a pipe that already holds the plugin's share (small enough
// for the pipe buffer, so writing never waits for the plugin), and the
// host's TLS configuration.
func sendTLS() (*os.File, *tls.Config, error) {
	pair, err := wire.NewTLSPair()
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("TLS pipe: %w", err)
	}
	_, err = w.Write(pair.Bundle)
	w.Close()
	if err != nil {
		r.Close()
		return nil, nil, fmt.Errorf("TLS pipe: %w", err)
	}
	return r, pair.Client, nil
}

// SetConfig implements Configurable: it passes the plugin its settings.
// A plugin that takes none gives ErrNotConfigurable.
func (c *Conn) SetConfig(ctx context.Context, doc []byte) ([]shared.ConfigProblem, error) {
	cfg, ok := c.Executor.(shared.Configurable)
	if !ok {
		return nil, shared.ErrNotConfigurable
	}
	return cfg.SetConfig(ctx, doc)
}

// Exited reports whether the plugin process has exited.
func (c *Conn) Exited() bool {
	if c.pipeDone != nil {
		select {
		case <-c.pipeDone:
			return true
		default:
			return false
		}
	}
	return c.client.Exited()
}

// Alive reports whether the plugin process is still running. Unlike
// Exited, which learns of an exit only once the process is reaped, it also
// sees a process that has just died (on Linux), so a host can start a fresh
// plugin instead of sending a call to a dead one.
func (c *Conn) Alive() bool {
	if c.Exited() {
		return false
	}
	pid := c.Pid()
	return pid == 0 || c.exit.alive(pid)
}

// Pid returns the plugin's process id, or 0 before it started.
func (c *Conn) Pid() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// Close stops the plugin (gracefully, then by force) and removes its socket
// directory. It is safe to call more than once.
func (c *Conn) Close() {
	defer c.exit.close()
	if c.pipeDone != nil {
		c.closePipe()
		return
	}
	c.client.Kill()
	c.closeLifeline()
	os.RemoveAll(c.socketDir)
}

// Binary is the file the plugin process was started from: cfg.Path, or
// the plugin's binary for one-shot hosts (OneShotPath); "" for a plugin
// attached to in debug mode.
func (c *Conn) Binary() string {
	if c.cmd == nil {
		return ""
	}
	return c.cmd.Path
}

// SocketDir is the private directory holding the plugin's socket;
// confinement backends deny it to commands.
func (c *Conn) SocketDir() string { return c.socketDir }

// socketBase is where socket directories go: the temporary directory, or
// /tmp when that is so deep a socket path inside it could pass the 107
// bytes a Unix socket address holds.
func socketBase() string {
	if base := os.TempDir(); len(base) <= 48 {
		return base
	}
	return "/tmp"
}

func levelName(l hclog.Logger) string {
	switch {
	case l.IsTrace():
		return "trace"
	case l.IsDebug():
		return "debug"
	case l.IsInfo():
		return "info"
	case l.IsWarn():
		return "warn"
	case l.IsError():
		return "error"
	}
	return "off"
}

// VersionError is a plugin whose handshake named a contract version this
// host did not offer.
type VersionError struct {
	// Plugin is the version the plugin's handshake named.
	Plugin int
	Err    error
}

func (e *VersionError) Error() string { return e.Err.Error() }
func (e *VersionError) Unwrap() error { return e.Err }

// handshakeVersionRe reads the version out of go-plugin's error for a
// plugin whose handshake names a version the host did not offer: go-plugin
// says so in words only, and this is the one place that reads them.
var handshakeVersionRe = regexp.MustCompile(`incompatible API version with plugin\. Plugin version: (\d+)`)

func handshakeVersion(err error) int {
	m := handshakeVersionRe.FindStringSubmatch(err.Error())
	if m == nil {
		return -1
	}
	v, convErr := strconv.Atoi(m[1])
	if convErr != nil {
		return -1
	}
	return v
}
