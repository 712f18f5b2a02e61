// Package landlock is the Linux sandbox backend. It confines each command
// with Landlock (files, TCP, signal and abstract-socket scopes), a seccomp
// filter (other socket families, ptrace, namespaces, io_uring and other
// kernel interfaces), resource limits, and, for root, an empty capability
// set and a pids cgroup. Restrictions are applied in a short-lived process
// (the run's supervisor, init of the run's own namespaces) to the thread it
// starts the command from, never in the plugin itself,
// because Landlock binds a process for good. No extra system package is
// needed, and it works for unprivileged users without user namespaces.
package landlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend/kit"
	"github.com/skillhost/skillhost/shared/denials"
	"github.com/skillhost/skillhost/shared/runner"
)

// Version is the backend's version.
const Version = "0.1.0"

// Executor is the Landlock backend.
type Executor struct {
	// runner runs the commands, with this package's confiner.
	runner *runner.Runner

	once     sync.Once
	features Features
	probe    shared.Probe

	mu       sync.Mutex
	settings Settings
	// temps are the temporary directories of runs in progress
	// (Landlock-only mode), removed by Close if a run could not.
	temps     map[string]bool
	sweepOnce sync.Once
	// hostTmp lists the host's /tmp for the runs that keep what they
	// leave there.
	hostTmp tmpListing
	// etcGlob expands systemEtc's patterns.
	etcGlob globCache
	// startEgress starts a run's egress proxy; nil in a build without
	// network by name.
	startEgress StartEgressProxy
	// swept is when run cgroups were last swept (unix nanoseconds).
	swept atomic.Int64
}

// sweepEvery is how often runs sweep the run cgroups whose owner is gone
// (a supervisor the runner's backstop killed could not remove its own).
// Each sweep lists the cgroup directories and reads each owner's
// /proc/<pid>/stat: 0.15 ms, which every run paid when each swept. Close
// sweeps too, so a plugin leaves none of its own behind.
const sweepEvery = 10 * time.Second

// sweep is confiner.SweepCgroups; tests count its calls.
var sweep = confiner.SweepCgroups

// sweepCgroups sweeps unless a run did in the last sweepEvery, or the
// plugin started then (a one-shot plugin's run leaves it to Close).
func (e *Executor) sweepCgroups() {
	now := time.Now().UnixNano()
	last := e.swept.Load()
	if now-last < int64(sweepEvery) || !e.swept.CompareAndSwap(last, now) {
		return
	}
	sweep()
}

// Settings are the backend's own settings, which the operator writes under
// plugins.config.landlock in skillhost's configuration.
type Settings struct {
	// BestEffort runs commands even where the kernel lacks Landlock or some
	// of its layers; every result then lists in NotEnforced what was not
	// enforced. Off by default: the backend fails closed.
	BestEffort bool `json:"best_effort"`
	// LandlockOnly runs commands where the kernel refuses the namespaces
	// the run's filesystem view needs (not root, and user namespaces
	// disabled), with Landlock and seccomp alone. Off by default: without
	// the view, paths outside the grant can still be stat'ed, listed by
	// their parents' rules, and their links and extended attributes read.
	LandlockOnly bool `json:"landlock_only"`
}

// SetConfig implements shared.Configurable.
func (e *Executor) SetConfig(_ context.Context, doc []byte) ([]shared.ConfigProblem, error) {
	var s Settings
	if problems := kit.DecodeConfig(doc, &s); len(problems) > 0 {
		return problems, nil
	}
	e.mu.Lock()
	e.settings = s
	e.mu.Unlock()
	return nil, nil
}

func (e *Executor) bestEffort() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settings.BestEffort
}

func (e *Executor) landlockOnly() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settings.LandlockOnly || e.settings.BestEffort
}

// errNoEgressProxy refuses a run by name in a build without the proxy.
var errNoEgressProxy = errors.New("this build of the landlock backend has no egress proxy (it is skillhost-oneshot-landlock, or built without landlock.WithEgressProxy), so it cannot keep a run to named hosts; start skillhost-sandbox-landlock")

// EgressProxy is a run's egress proxy, as Execute uses it
// (shared/egress/proxy's Proxy).
type EgressProxy interface {
	Port() int
	// Env is the proxy variables a command gets, for the proxy reached at
	// port and the trust bundle at caFile ("" for none).
	Env(port int, caFile string) []string
	// CABundle is the certificate a command must trust where the proxy
	// terminates TLS, or nil.
	CABundle() []byte
	Violations() []shared.Violation
	Close() error
}

// StartEgressProxy starts the egress proxy of one run by name.
type StartEgressProxy func(g *shared.Egress, log hclog.Logger) (EgressProxy, error)

// Option configures New.
type Option func(*Executor)

// WithEgressProxy gives the backend network by name, through proxies start
// starts (package egressproxy's Start). Without it the backend does not
// claim egress (Info) and refuses a run by name: the proxy and its TLS
// stack are a fifth of a plugin's start, which a binary for one-shot hosts
// leaves out, since such hosts start the plugin's own binary for a run by
// name.
func WithEgressProxy(start StartEgressProxy) Option {
	return func(e *Executor) { e.startEgress = start }
}

// New returns the Landlock backend. Its supervisors and confine helpers
// are skillhost-supervisor-landlock when the host hands it over
// (runner.WithSupervisor), else this binary re-executed, and New does their
// job in them and exits (see runner.WithConfiner): a plugin's main calls
// it first.
func New(opts ...Option) *Executor {
	e := &Executor{runner: kit.NewRunner(confiner.Option())}
	for _, o := range opts {
		o(e)
	}
	e.swept.Store(time.Now().UnixNano())
	return e
}

// kernel detects what this machine offers, once: the answer does not
// change while the plugin runs.
func (e *Executor) kernel() (Features, shared.Probe) {
	e.once.Do(func() {
		e.features = detect()
		e.probe = e.features.Probe()
	})
	return e.features, e.probe
}

// Info implements shared.Executor.
func (e *Executor) Info(context.Context) (shared.Info, error) {
	return shared.Info{
		Name:             "landlock",
		Version:          Version,
		ContractVersions: []int{shared.ContractVersion},
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		Enforces: shared.Enforcement{
			FSRead: true, FSWrite: true, Network: true, Timeout: true,
			ResourceLimits: true, ProcessIsolation: true, Egress: e.startEgress != nil, StagedWrites: true,
		},
		Isolation: e.isolation(),
	}, nil
}

// isolation declares the namespaces runs get: where the kernel gives the
// read-only view (a run that cannot have it fails), new PID and mount
// namespaces, a user namespace when the plugin is not root, and a network
// namespace with nothing in it unless the grant opens the whole network;
// System V IPC stays the host's. Without the view, namespaces are not
// promised, so none is declared.
func (e *Executor) isolation() shared.Isolation {
	f, _ := e.kernel()
	if !f.ReadOnlyView {
		return shared.Isolation{}
	}
	iso := shared.Isolation{Network: shared.PrivateUnlessNetwork, PID: shared.Private, Mount: shared.Private}
	if f.Uid != 0 {
		iso.User = shared.Private
	}
	return iso
}

// Close, as the plugin exits, stops the spare supervisor waiting for a next
// run (the plugin moved it into run cgroups of its own) and removes the run
// cgroups that runs ended too abruptly to remove (a supervisor killed by the
// backstop). The serving code calls it.
func (e *Executor) Close() error {
	_ = e.runner.Close()
	confiner.SweepCgroups()
	e.mu.Lock()
	temps := e.temps
	e.temps = nil
	e.mu.Unlock()
	for dir := range temps {
		_ = removeTree(dir)
	}
	return nil
}

// tempPrefix starts the name of a run's temporary directory (Landlock-only
// mode), followed by the plugin's pid: a plugin that was killed before it
// could remove its directories leaves them to the next one's sweep.
const tempPrefix = "skillhost-run-"

// tempDir makes a run's temporary directory, first sweeping those of
// plugins that are gone (once per plugin).
func (e *Executor) tempDir() (string, error) {
	e.sweepOnce.Do(sweepTemps)
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	if e.temps == nil {
		e.temps = map[string]bool{}
	}
	e.temps[dir] = true
	e.mu.Unlock()
	return dir, nil
}

func (e *Executor) removeTemp(dir string) {
	_ = removeTree(dir)
	e.mu.Lock()
	delete(e.temps, dir)
	e.mu.Unlock()
}

// Probe implements shared.Executor.
func (e *Executor) Probe(context.Context) (shared.Probe, error) {
	f, p := e.kernel()
	if p.Status == shared.Healthy && !f.ReadOnlyView && !e.landlockOnly() {
		p.Status = shared.Unsupported
		p.Reason = "no namespaces for the run's filesystem view (" + f.Namespaces + "); " + confiner.RemedyNoNamespaces
	}
	p.BestEffort = p.Status != shared.Healthy && e.bestEffort()
	return p, nil
}

// ErrUnsupported is returned, wrapped, when the kernel cannot confine and
// the request did not ask for best effort.
var ErrUnsupported = errors.New("the landlock plugin cannot confine scripts on this machine")

// Execute implements shared.Executor.
func (e *Executor) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	f, probe := e.kernel()
	byName := req.Grant.ByName()
	if err := e.refusal(f, probe, req, byName); err != nil {
		return shared.Result{}, err
	}
	// With the view, the run's temporary directory is a tmpfs of its own
	// mount namespace, gone with it: nothing to create or remove on the
	// host. Without, a directory of the plugin's.
	tmp := confiner.ViewTmp
	if !f.ReadOnlyView {
		var err error
		if tmp, err = e.tempDir(); err != nil {
			return shared.Result{}, fmt.Errorf("private temporary directory: %w", err)
		}
		defer e.removeTemp(tmp)
	}
	if err := createWritePaths(req.Grant.FSWrite); err != nil {
		return shared.Result{}, err
	}
	if req.Stage != "" && len(req.Grant.FSWrite) > 0 {
		if !f.ReadOnlyView {
			return shared.Result{}, shared.Refused(shared.ReasonUnsupported, fmt.Errorf("%w: staged writes need the run's namespaces (%s); %s, or set sandbox.writes: direct to let runs write the grant's trees directly", ErrUnsupported, f.Namespaces, confiner.RemedyNoNamespaces))
		}
		if err := makeStage(req.Stage, req.Grant.FSWrite); err != nil {
			return shared.Result{}, err
		}
	}

	var proxy EgressProxy
	if byName {
		var caFile string
		var err error
		if proxy, caFile, err = e.startProxy(ctx, req.Grant.Egress); err != nil {
			return shared.Result{}, err
		}
		defer proxy.Close()
		if caFile != "" {
			defer os.Remove(caFile)
			req.Grant.FSRead = append(slices.Clone(req.Grant.FSRead), caFile)
		}
		req.Env = withEnvs(req.Env, proxy.Env(proxy.Port(), caFile))
	}
	pol := e.policy(f, req, tmp)
	if proxy != nil {
		pol.Egress = &confiner.Route{Port: proxy.Port(), Target: net.JoinHostPort("127.0.0.1", strconv.Itoa(proxy.Port()))}
	}
	var err error
	if f.Uid != 0 && req.Limits.Processes > 0 {
		pol.NprocBase = nprocOf(f.Uid)
	}
	if pol.Cgroups {
		// Synchronously, not in a goroutine a plugin about to exit would
		// never run.
		defer e.sweepCgroups()
	}
	loopback := pol.Egress != nil
	if pol.Seccomp, err = seccompFilter(filterKey{network: pol.Network, loopback: loopback, landlockUnix: pol.ABI >= 9}); err != nil {
		return shared.Result{}, fmt.Errorf("seccomp filter: %w", err)
	}
	if pol.SeccompNoMounts, err = seccompFilter(filterKey{network: pol.Network, loopback: loopback, landlockUnix: pol.ABI >= 9, noMetadata: true}); err != nil {
		return shared.Result{}, fmt.Errorf("seccomp filter: %w", err)
	}
	payload, err := pol.Encode()
	if err != nil {
		return shared.Result{}, err
	}
	spec := kit.SpecFor(req)
	spec.Env = kit.WithEnv(req.Env, "TMPDIR", tmp)
	spec.Confine, spec.ConfinePayload = confiner.Name, payload

	var left leftInTmp
	if pol.View != nil && req.Stage != "" && privateTmp(req) {
		spec.KeepTmp, spec.TmpLeft = e.hostTmp.dirs(confiner.ViewTmp), left.add
	}
	var captured denials.Capture
	res, err := e.runner.Execute(ctx, spec, captured.Tee(emit))
	if err != nil {
		return shared.Result{}, explainSetup(err, pol, req)
	}
	res.Violations = Violations(captured.String(), pol, denials.Launcher(req.Argv, req.SkillDir), req.Dir)
	res.Violations = append(res.Violations, left.stage(req.Stage)...)
	if proxy != nil {
		res.Violations = append(res.Violations, proxy.Violations()...)
	}
	// req.BestEffort is how hosts before SetConfig asked for it.
	if e.bestEffort() || req.BestEffort {
		res.NotEnforced = f.NotEnforced()
	}
	res.NotEnforced = append(res.NotEnforced, socketNote(pol)...)
	return res, nil
}

// refusal is why a run cannot run here at all, checked before anything is
// made for it; nil if it can.
func (e *Executor) refusal(f Features, probe shared.Probe, req shared.Request, byName bool) error {
	if probe.Status != shared.Healthy && !e.bestEffort() && !req.BestEffort {
		return shared.Refused(shared.ReasonUnsupported, fmt.Errorf("%w: %s; it fails closed (set plugins.config.landlock.best_effort: true to run with what is available, or pick another strategy)", ErrUnsupported, probe.Reason))
	}
	if byName && e.startEgress == nil {
		return shared.Refused(shared.ReasonEgress, errNoEgressProxy)
	}
	if !f.ReadOnlyView && !e.landlockOnly() && !req.BestEffort {
		return shared.Refused(shared.ReasonUnsupported, fmt.Errorf("%w: no namespaces for the run's filesystem view (%s); %s", ErrUnsupported, f.Namespaces, confiner.RemedyNoNamespaces))
	}
	if byName && !f.ReadOnlyView {
		return shared.Refused(shared.ReasonUnsupported, fmt.Errorf("%w: network by name needs the run's namespaces (%s); %s", ErrUnsupported, f.Namespaces, confiner.RemedyNoNamespaces))
	}
	return nil
}

// startProxy starts a run's egress proxy and, when it terminates TLS for
// a credential, writes the trust bundle the run is given to a file of its
// own (read-only to the run through its grant).
func (e *Executor) startProxy(ctx context.Context, g *shared.Egress) (EgressProxy, string, error) {
	p, err := e.startEgress(g, kit.LoggerFrom(ctx))
	if err == nil && p == nil {
		err = errors.New("the egress proxy did not start, and said nothing")
	}
	if err != nil {
		return nil, "", shared.Refused(shared.ReasonEgress, err)
	}
	bundle := p.CABundle()
	if bundle == nil {
		return p, "", nil
	}
	f, err := os.CreateTemp("", "skillhost-ca-*.pem")
	if err == nil {
		_, err = f.Write(bundle)
		if err == nil {
			// On the open file, not its name: a run that can write the
			// host's /tmp could have put a symlink there by now.
			err = f.Chmod(0o644)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		p.Close()
		return nil, "", fmt.Errorf("egress trust bundle: %w", err)
	}
	return p, f.Name(), nil
}

// withEnvs sets each NAME=value of add in env.
func withEnvs(env, add []string) []string {
	for _, kv := range add {
		k, v, _ := strings.Cut(kv, "=")
		env = kit.WithEnv(env, k, v)
	}
	return env
}

// policy is the request's policy on this machine, tmp being the run's
// private temporary directory.
func (e *Executor) policy(f Features, req shared.Request, tmp string) confiner.Policy {
	pol := Build(req, Env{ABI: f.ABI, TempDir: tmp, Root: f.Uid == 0, View: f.ReadOnlyView, Glob: e.etcGlob.glob})
	pol.Cgroups = f.Uid == 0 && len(f.Cgroups) > 0
	return pol
}

// createWritePaths creates granted write directories that do not exist
// yet: Landlock can only grant what exists, and a script could not create
// them itself without write access to their parent. Each is made one
// component at a time beneath a descriptor opened without following
// symlinks, so a run that swaps a directory for a symlink meanwhile makes
// this fail rather than create anything elsewhere.
func createWritePaths(paths []string) error {
	for _, p := range paths {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			if err := confiner.MkdirNoFollow(p); err != nil {
				return fmt.Errorf("create fs_write directory %s: %w; refusing to run", p, err)
			}
		}
	}
	return nil
}

// leftInTmp are the files a run left in its private /tmp.
type leftInTmp []runner.LeftFile

func (l *leftInTmp) add(f runner.LeftFile) { *l = append(*l, f) }

// stage keeps, in stage's discarded/ tree, each left file whose directory
// exists on the host: a write the script meant for the host (its result,
// say) that went to its private /tmp, outside every write grant, and would
// be lost with it. Each is a violation of kind "discarded"; the host reads
// the kept copies with the run's changes.
func (l leftInTmp) stage(stage string) []shared.Violation {
	var out []shared.Violation
	for _, f := range l {
		dir := hostAncestor(filepath.Dir(f.Path))
		if dir == "" {
			continue
		}
		kept := filepath.Join(shared.StageDiscarded(stage), f.Path)
		if err := os.MkdirAll(filepath.Dir(kept), 0o700); err != nil {
			continue
		}
		if err := os.WriteFile(kept, f.Data, os.FileMode(f.Mode&0o777)|0o600); err != nil {
			continue
		}
		out = append(out, shared.Violation{Kind: "discarded", Target: f.Path,
			Detail: fmt.Sprintf("written to the run's private %s, not the host's: %s is outside every write grant (grant fs_write %s to write there)", confiner.ViewTmp, dir, dir)})
	}
	return out
}

// hostAncestor returns the nearest of dir and its parents that is a
// directory on the host, stopping at ViewTmp: "" when there is none below
// it (a run's own scratch directory, gone with it by design).
func hostAncestor(dir string) string {
	for ; dir != confiner.ViewTmp && shared.Under(dir, confiner.ViewTmp); dir = filepath.Dir(dir) {
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	return ""
}

// makeStage creates the upper and work directories of each write grant in
// stage, as the plugin's user (the overlay's upper layer must be its).
func makeStage(stage string, write []string) error {
	for i, w := range write {
		fi, err := os.Stat(w)
		if err == nil && !fi.IsDir() {
			return shared.Refused(shared.ReasonUnsupported, fmt.Errorf("fs_write %s is a file: staged writes are for directories (grant its directory, or set sandbox.writes: direct to let runs write files in place)", w))
		}
		for _, d := range []string{shared.StageUpper(stage, i), shared.StageWork(stage, i)} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return fmt.Errorf("stage of %s: %w", w, err)
			}
		}
		if err == nil {
			// The overlay's root takes the upper layer's mode: the run
			// sees the directory as it is (the stage above stays 0700).
			_ = os.Chmod(shared.StageUpper(stage, i), fi.Mode().Perm())
		}
	}
	return nil
}

// socketNote warns when a grant covers the plugin's own socket directory,
// which Landlock cannot carve out of a granted tree; AutoMTLS keeps the
// socket unusable to scripts even then.
func socketNote(p confiner.Policy) []string {
	dir := os.Getenv("PLUGIN_UNIX_SOCKET_DIR")
	if dir == "" || !p.Network || !p.Readable(dir) {
		return nil
	}
	return []string{fmt.Sprintf("the grant covers the plugin's socket directory %s; only AutoMTLS protects the socket", dir)}
}

// Explain implements shared.Explainer: the policy the confine helper would
// apply, as JSON, with a placeholder for the per-run temporary directory.
func (e *Executor) Explain(_ context.Context, req shared.Request) (shared.Explanation, error) {
	f, _ := e.kernel()
	pol := e.policy(f, req, "")
	pol.RWDirs = append(pol.RWDirs, "<per-run temporary directory>")
	text, err := json.MarshalIndent(pol, "", "  ")
	if err != nil {
		return shared.Explanation{}, err
	}
	readable := slices.Concat(pol.RODirs, pol.ROFiles, pol.RWDirs[:len(pol.RWDirs)-1], pol.RWFiles)
	return shared.Explanation{Format: "json", Text: string(text) + "\n", Argv: req.Argv, Readable: readable}, nil
}
