package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
	"github.com/skillhost/skillhost/shared/runner"
)

// Options configure a Manager.
type Options struct {
	// Dirs are searched in order for plugin binaries.
	Dirs []string
	// StrictDirs warns about directories in Dirs that do not exist (set
	// when they come from the configuration rather than the defaults).
	StrictDirs bool
	// Pins maps plugin names to the hex SHA-256 their binary must have.
	Pins map[string]string
	// AutoMTLS, OneShot, StartTimeout, Logger and Env are passed to
	// pluginclient.Launch.
	AutoMTLS     bool
	OneShot      bool
	StartTimeout time.Duration
	Logger       hclog.Logger
	Env          []string
	// Configs are plugins' own settings by plugin name, JSON objects
	// passed unread to the plugin's SetConfig at each start. A plugin
	// without an entry gets "{}".
	Configs map[string][]byte
	// AnswerMargin is how long after a call's timeout and kill grace the
	// plugin may take to answer before the host gives up on it, stops it
	// and reports it as hung (default 30 s).
	AnswerMargin time.Duration
	// HostVersion is what the in-process strategy reports as its version.
	HostVersion string
	// Trace, when set, is told as each step of a plugin's start ends
	// (SKILLHOST_TRACE=timing; see pluginclient.LaunchConfig.Trace).
	Trace func(step string)
}

// trace reports a step of a plugin's start to Options.Trace, if set.
func (m *Manager) trace(step string) {
	if m.opts.Trace != nil {
		m.opts.Trace(step)
	}
}

// Manager keeps one long-lived process per plugin, shared by all calls,
// and replaces a process that crashed. It is safe for concurrent use.
type Manager struct {
	opts Options
	// inProc is the in-process strategy's runner, made on its first use:
	// most hosts never run a script in-process.
	inProc struct {
		mu     sync.Mutex
		runner *runner.Runner
		closed bool // Close was called: a runner made later keeps no spares
	}

	discover sync.Once
	found    map[string]Candidate
	warnings []string

	mu        sync.Mutex
	instances map[string]*instance
	closed    bool
}

type instance struct {
	mu        sync.Mutex // serialises starts
	conn      *pluginclient.Conn
	info      shared.Info
	probe     shared.Probe
	failures  int
	notBefore time.Time
}

// defaultAnswerMargin is Options.AnswerMargin's default: generous, since
// on a busy machine a healthy plugin can be slow to tear a command down.
const defaultAnswerMargin = 30 * time.Second

// Backoff bounds between restarts of a plugin that keeps failing.
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 5 * time.Second
)

// NewManager returns a manager; nothing is discovered or started until
// first use.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.AnswerMargin <= 0 {
		opts.AnswerMargin = defaultAnswerMargin
	}
	return &Manager{opts: opts, instances: map[string]*instance{}}
}

// inProcessRunner is the in-process strategy's runner, the manager's own:
// a one-shot manager's keeps no spare supervisor, whatever other managers
// of the program do.
func (m *Manager) inProcessRunner() *runner.Runner {
	m.inProc.mu.Lock()
	defer m.inProc.mu.Unlock()
	if m.inProc.runner == nil {
		ropts := []runner.Option{runner.WithSpares(!m.opts.OneShot && !m.inProc.closed)}
		if f := noneSupervisor(); f != nil {
			ropts = append(ropts, runner.WithSupervisor(f))
			f.Close()
		}
		m.inProc.runner = runner.New(ropts...)
	}
	return m.inProc.runner
}

// NoneSupervisor is the lean supervisor binary of the in-process strategy,
// looked for beside this program: without it, each of its runs re-executes
// this program, which costs several times as much to start.
const NoneSupervisor = "skillhost-supervisor-none"

// noneSupervisor opens NoneSupervisor beside this program, or returns nil.
func noneSupervisor() *os.File {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	f, err := pluginclient.OpenExecutable(filepath.Join(filepath.Dir(exe), NoneSupervisor))
	if err != nil {
		return nil
	}
	return f
}

// Plugins returns the discovered plugins and the discovery warnings.
func (m *Manager) Plugins() (map[string]Candidate, []string) {
	m.discover.Do(func() { m.found, m.warnings = Discover(m.opts.Dirs, m.opts.StrictDirs) })
	return m.found, m.warnings
}

// Dirs returns the directories searched.
func (m *Manager) Dirs() []string { return m.opts.Dirs }

// NotFoundError is a strategy whose plugin binary is nowhere to be found.
type NotFoundError struct {
	Name string
	Dirs []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("sandbox plugin %q not found: there is no %s%s in %s. Install it (make build puts every plugin next to skillhost) "+
		"or name the directory it is in with plugins.dirs (host.Options.PluginDirs for a program that embeds skillhost), "+
		"pick another with sandbox.strategy or --strategy, or set sandbox.enabled: false to run scripts unconfined",
		e.Name, BinaryPrefix, e.Name, strings.Join(e.Dirs, ", "))
}

// UnsupportedError is a plugin that cannot confine commands on this machine.
type UnsupportedError struct {
	Name, Path string
	Probe      shared.Probe
	// Remote: the plugin runs commands elsewhere (a fleet), so what is
	// missing is on the other side, and running unconfined here is no
	// remedy.
	Remote bool
}

func (e *UnsupportedError) Error() string {
	if e.Remote {
		return fmt.Sprintf("sandbox plugin %q (%s) cannot take runs now (%s: %s). It runs scripts elsewhere: check what it needs there "+
			"(skillhost doctor shows it; for the fleet, the cluster and its workers: docs/fleet.md), or pick another strategy with sandbox.strategy or --strategy",
			e.Name, e.Path, e.Probe.Status, e.Probe.Reason)
	}
	return fmt.Sprintf("sandbox plugin %q (%s) cannot confine scripts here (%s: %s). Pick another with sandbox.strategy or --strategy, "+
		"allow a partial sandbox if the plugin has a setting for it (under plugins.config.%s; see the plugin's documentation), "+
		"or set sandbox.enabled: false to run scripts unconfined",
		e.Name, e.Path, e.Probe.Status, e.Probe.Reason, e.Name)
}

// ConfigError is a plugin that refused its settings (plugins.config.<name>).
type ConfigError struct {
	Name, Path string
	Problems   []shared.ConfigProblem
}

func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		key := "plugins.config." + e.Name
		if p.Key != "" {
			key += "." + p.Key
		}
		lines[i] = key + ": " + p.Message
	}
	return fmt.Sprintf("sandbox plugin %q (%s) refused its settings: %s", e.Name, e.Path, strings.Join(lines, "; "))
}

// configure hands a freshly started plugin its settings.
func (m *Manager) configure(ctx context.Context, name, path string, conn *pluginclient.Conn) error {
	doc, set := m.opts.Configs[name]
	if !set {
		doc = []byte("{}")
	}
	problems, err := conn.SetConfig(ctx, doc)
	switch {
	case errors.Is(err, shared.ErrNotConfigurable):
		if set {
			return &ConfigError{Name: name, Path: path, Problems: []shared.ConfigProblem{{Message: "this plugin takes no settings; remove them"}}}
		}
		return nil
	case err != nil:
		return fmt.Errorf("sandbox plugin %q at %s: settings: %w", name, path, err)
	case len(problems) > 0:
		return &ConfigError{Name: name, Path: path, Problems: problems}
	}
	return nil
}

// IncompatibleError is a plugin whose Info.ContractVersions lack the
// host's shared.ContractVersion. Info is what the plugin said of itself.
type IncompatibleError struct {
	Name, Path string
	Info       shared.Info
}

func (e *IncompatibleError) Error() string {
	speaks := "declares no contract version"
	if len(e.Info.ContractVersions) > 0 {
		vs := make([]string, len(e.Info.ContractVersions))
		for i, v := range e.Info.ContractVersions {
			vs[i] = strconv.Itoa(v)
		}
		speaks = "speaks contract version " + strings.Join(vs, ", ")
	}
	return fmt.Sprintf("sandbox plugin %q (%s, version %s) %s, but this skillhost speaks contract version %d. "+
		"Install a build of the plugin for contract version %d, or pick another with sandbox.strategy or --strategy",
		e.Name, e.Path, e.Info.Version, speaks, shared.ContractVersion, shared.ContractVersion)
}

// Compatible reports whether a plugin declaring versions can serve this
// host: the list must include shared.ContractVersion.
func Compatible(versions []int) bool { return slices.Contains(versions, shared.ContractVersion) }

// Executor returns the executor of plugin name. The plugin is started on
// first use and restarted, with backoff, after a crash.
func (m *Manager) Executor(name string) shared.Executor { return &managed{m: m, name: name} }

// Close stops every plugin process.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	insts := m.instances
	m.instances = map[string]*instance{}
	m.mu.Unlock()
	m.inProc.mu.Lock()
	m.inProc.closed = true
	if m.inProc.runner != nil {
		_ = m.inProc.runner.Close()
	}
	m.inProc.mu.Unlock()
	for _, inst := range insts {
		inst.mu.Lock()
		if inst.conn != nil {
			inst.conn.Close()
			inst.conn = nil
		}
		inst.mu.Unlock()
	}
}

func (m *Manager) instance(name string) (*instance, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("sandbox manager is closed")
	}
	inst := m.instances[name]
	if inst == nil {
		inst = &instance{}
		m.instances[name] = inst
	}
	return inst, nil
}

// instanceKey names the process a call to plugin name goes to. In a
// one-shot host a call whose network is by name (byName) has one of its
// own, started from the plugin's own binary: a binary for one-shot hosts
// need not carry the egress proxy. A host that breaks its promise of one
// call thus never has a call in flight torn down for another.
func (m *Manager) instanceKey(name string, byName bool) string {
	if byName && m.opts.OneShot {
		return name + " (by name)"
	}
	return name
}

// conn returns a running process for a call to name (see instanceKey),
// starting one if needed.
func (m *Manager) conn(ctx context.Context, name string, byName bool) (*pluginclient.Conn, shared.Probe, error) {
	inst, err := m.instance(m.instanceKey(name, byName))
	if err != nil {
		return nil, shared.Probe{}, err
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if inst.conn != nil {
		if inst.conn.Alive() {
			return inst.conn, inst.probe, nil
		}
		m.opts.Logger.Warn("sandbox plugin exited; restarting", "plugin", name)
		inst.conn.Close()
		inst.conn = nil
		inst.fail()
	}
	if wait := time.Until(inst.notBefore); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, shared.Probe{}, ctx.Err()
		}
	}
	found, _ := m.Plugins()
	cand, ok := found[name]
	if !ok {
		return nil, shared.Probe{}, &NotFoundError{Name: name, Dirs: m.opts.Dirs}
	}
	if err := verify(cand, m.opts.Pins); err != nil {
		return nil, shared.Probe{}, err
	}
	sup, useSup, err := supervisorFor(cand, m.opts.Pins)
	if err != nil {
		return nil, shared.Probe{}, err
	}
	if sup != nil {
		defer sup.Close()
	}
	m.trace("plugin lookup (discovery, pin check)")
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{
		Path:         cand.Path,
		Env:          m.opts.Env,
		AutoMTLS:     m.opts.AutoMTLS,
		OneShot:      m.opts.OneShot,
		StartTimeout: m.opts.StartTimeout,
		Logger:       m.opts.Logger.Named(name),
		Trace:        m.opts.Trace,
		Supervisor:   sup,
		NoSupervisor: !useSup,
		// A pin covers the plugin's binary (and its supervisor's), not
		// its binary for one-shot hosts.
		NoOneShotBinary: pinnedAtAll(cand, m.opts.Pins) || byName,
	})
	if err != nil {
		inst.fail()
		if ve := (*pluginclient.VersionError)(nil); errors.As(err, &ve) {
			return nil, shared.Probe{}, fmt.Errorf("sandbox plugin %q at %s speaks contract version %d, but this skillhost speaks contract version %d. "+
				"Install a build of the plugin for contract version %d, or pick another with sandbox.strategy or --strategy (%w)",
				name, cand.Path, ve.Plugin, shared.ContractVersion, shared.ContractVersion, err)
		}
		return nil, shared.Probe{}, fmt.Errorf("sandbox plugin %q at %s: %w", name, cand.Path, err)
	}
	// The handshake agreed on a protocol number; Info is where the plugin
	// states every contract version it implements, and the host holds it
	// to that before sending it anything else.
	info, err := conn.Info(ctx)
	if err != nil {
		conn.Close()
		inst.fail()
		return nil, shared.Probe{}, fmt.Errorf("sandbox plugin %q at %s: info: %w", name, cand.Path, err)
	}
	if !Compatible(info.ContractVersions) {
		conn.Close()
		inst.fail()
		return nil, shared.Probe{}, &IncompatibleError{Name: name, Path: cand.Path, Info: info}
	}
	if err := m.configure(ctx, name, cand.Path, conn); err != nil {
		conn.Close()
		inst.fail()
		return nil, shared.Probe{}, err
	}
	probe, err := conn.Probe(ctx)
	if err != nil {
		conn.Close()
		inst.fail()
		return nil, shared.Probe{}, fmt.Errorf("sandbox plugin %q at %s: probe: %w", name, cand.Path, err)
	}
	inst.conn, inst.info, inst.probe = conn, info, probe
	m.trace("plugin Info, SetConfig, Probe")
	return conn, probe, nil
}

func (inst *instance) fail() {
	inst.failures++
	d := backoffBase << min(inst.failures-1, 10)
	inst.notBefore = time.Now().Add(min(d, backoffMax))
}

// crashed drops a dead process so the next call starts a fresh one.
func (m *Manager) crashed(key string, conn *pluginclient.Conn) {
	inst, err := m.instance(key)
	if err != nil {
		return
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if inst.conn == conn {
		conn.Close()
		inst.conn = nil
		inst.fail()
	}
}

func (m *Manager) succeeded(key string) {
	if inst, err := m.instance(key); err == nil {
		inst.mu.Lock()
		inst.failures = 0
		inst.mu.Unlock()
	}
}

// Pid returns the process id of the running plugin name, or 0.
func (m *Manager) Pid(name string) int {
	inst, err := m.instance(name)
	if err != nil {
		return 0
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if inst.conn == nil {
		return 0
	}
	return inst.conn.Pid()
}

// errNoAnswer is the cause of a call cancelled because the plugin did not
// answer in time.
var errNoAnswer = errors.New("the plugin did not answer in time")

// managed is the Executor of one plugin name, backed by whatever process
// currently serves it.
type managed struct {
	m    *Manager
	name string
	// byName: its calls' network is by name (Choice.ByName).
	byName bool
}

// key names the instance whose process serves e's calls.
func (e *managed) key() string { return e.m.instanceKey(e.name, e.byName) }

// Info returns what the plugin said when it started, which the host
// checked against its contract version.
func (e *managed) Info(ctx context.Context) (shared.Info, error) {
	if _, _, err := e.m.conn(ctx, e.name, e.byName); err != nil {
		return shared.Info{}, err
	}
	return e.m.info(e.key()), nil
}

// info is what the running plugin name said of itself when it started;
// call it after conn succeeded.
func (m *Manager) info(key string) shared.Info {
	inst, err := m.instance(key)
	if err != nil {
		return shared.Info{}
	}
	inst.mu.Lock()
	defer inst.mu.Unlock()
	return inst.info
}

// Probe returns what the plugin said when it started: the answer Execute
// goes by, not a second opinion.
func (e *managed) Probe(ctx context.Context) (shared.Probe, error) {
	_, probe, err := e.m.conn(ctx, e.name, e.byName)
	return probe, err
}

func (e *managed) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	conn, probe, err := e.m.conn(ctx, e.name, e.byName)
	if err != nil {
		return shared.Result{}, err
	}
	// conn has just checked the process; Info would check it again.
	info := e.m.info(e.key())
	if probe.Status != shared.Healthy && !probe.BestEffort && !req.BestEffort {
		found, _ := e.m.Plugins()
		return shared.Result{}, &UnsupportedError{Name: e.name, Path: found[e.name].Path, Probe: probe, Remote: info.Remote}
	}
	if info.Remote {
		if req, err = forRemote(req); err != nil {
			return shared.Result{}, fmt.Errorf("sandbox plugin %q runs commands elsewhere: %w", e.name, err)
		}
	}
	// A plugin that stops answering must not hang the host: the call ends
	// at the script's timeout plus the kill grace plus a margin. The bound
	// is a timer that cancels the call, not a deadline: gRPC would pass a
	// deadline on to the plugin, whose end could then give up a moment
	// before this one and make a hang look like an ordinary error.
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if req.Grant.Timeout > 0 {
		t := time.AfterFunc(req.Grant.Timeout+req.KillGrace+e.m.opts.AnswerMargin, func() { cancel(errNoAnswer) })
		defer t.Stop()
	}
	res, err := conn.Execute(callCtx, req, emit)
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(callCtx), errNoAnswer) {
			e.m.crashed(e.key(), conn)
			return shared.Result{}, fmt.Errorf("sandbox plugin %q did not answer within %s of the script's timeout and kill grace; it was stopped, and the next call starts a fresh one",
				e.name, e.m.opts.AnswerMargin)
		}
		if ctx.Err() == nil && (errors.Is(err, pluginclient.ErrCrashed) || conn.Exited()) {
			e.m.crashed(e.key(), conn)
			detail := err.Error()
			if ce := (*pluginclient.CrashError)(nil); errors.As(err, &ce) {
				detail = ce.Detail
			}
			return shared.Result{}, fmt.Errorf("sandbox plugin %q crashed: %s", e.name, detail)
		}
		return shared.Result{}, err
	}
	e.m.succeeded(e.key())
	if info.Remote {
		res = writeBack(ctx, req, res)
	} else if len(res.Files) > 0 {
		// Only a remote backend's command writes elsewhere; a local one
		// has written its files in place already.
		res.Files, res.FilesTruncated = nil, false
	}
	return res, nil
}

// Explain implements shared.Explainer for plugins that do.
func (e *managed) Explain(ctx context.Context, req shared.Request) (shared.Explanation, error) {
	conn, _, err := e.m.conn(ctx, e.name, e.byName)
	if err != nil {
		return shared.Explanation{}, err
	}
	ex, ok := conn.Executor.(shared.Explainer)
	if !ok {
		return shared.Explanation{}, shared.ErrNotExplainable
	}
	return ex.Explain(ctx, req)
}
