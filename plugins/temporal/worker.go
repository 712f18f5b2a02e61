package temporal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// WorkerOptions configure a fleet worker.
type WorkerOptions struct {
	Connection
	// Strategy names the local plugin that confines each run (default
	// landlock), found in PluginsDir (default: next to this binary).
	Strategy, PluginsDir string
	// Concurrency is how many runs at once (default 4).
	Concurrency int
	// CacheDir holds the skills fetched by digest, and each run's scratch
	// directories (default: the user's cache directory).
	CacheDir string
	// SharedPaths says this worker sees the host's file system (the same
	// machine, or the same network mounts): a request's paths are used as
	// they are, and its skill is not fetched. Without it a run gets its
	// skill by digest, scratch directories for its writable mounts (whose
	// files go back with the result), and no host path to read.
	SharedPaths bool
	// Identity names the worker in results (default host name and pid).
	Identity string
	// CacheSize bounds the bytes of skills kept in CacheDir (default
	// 2 GiB): past it, those used longest ago and not in use go.
	CacheSize int64
	// StopTimeout is how long Stop waits for the runs in progress
	// (default 10 minutes); past it they are cancelled.
	StopTimeout time.Duration
	// Ceiling is the most a job may have on this worker (the zero value:
	// no host path, no network); a job over it is refused.
	Ceiling Ceiling
	// Logger gets a line per run, per change of the connection to the
	// cluster, and per drain (default: none).
	Logger hclog.Logger
	// MetricsAddr, if set, is where the worker serves its Prometheus
	// metrics (/metrics), /healthz and /readyz; port 0 picks a free one
	// (see Fleet.MetricsAddr).
	MetricsAddr string
}

// Fleet is a running fleet worker.
type Fleet struct {
	opts   WorkerOptions
	client client.Client
	worker worker.Worker
	local  *pluginclient.Conn
	info   shared.Info
	cache  *skillCache
	name   string

	log     hclog.Logger
	running atomic.Int64  // runs in progress
	lost    atomic.Bool   // the cluster does not answer
	done    chan struct{} // closed by Stop: the cluster watch ends
	metrics *workerMetrics

	http     *http.Server // serves MetricsAddr, if set
	httpAddr string

	mu      sync.Mutex
	ran     map[string]bool // the run ids of the requests this worker ran
	stopped bool
}

// StartWorker connects to the cluster, starts the local plugin and
// serves jobs until Stop.
func StartWorker(o WorkerOptions) (*Fleet, error) {
	if o.Strategy == "" {
		o.Strategy = "landlock"
	}
	if o.PluginsDir == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		o.PluginsDir = filepath.Dir(exe)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("--cache-dir: %w", err)
		}
		o.CacheDir = filepath.Join(dir, "skillhost", "fleet")
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 10 * time.Minute
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 2 << 30
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	cache, err := newSkillCache(filepath.Join(o.CacheDir, "skills"), o.CacheSize)
	if err != nil {
		return nil, err
	}
	sweep(o.CacheDir)
	cache.evict() // and measures it
	local, err := launchLocal(o)
	if err != nil {
		return nil, err
	}
	info, err := local.Info(context.Background())
	if err == nil {
		var p shared.Probe
		if p, err = local.Probe(context.Background()); err == nil && p.Status != shared.Healthy {
			err = fmt.Errorf("the %s plugin cannot confine here: %s", o.Strategy, p.Reason)
		}
	}
	if err != nil {
		local.Close()
		return nil, err
	}
	f := &Fleet{opts: o, local: local, info: info, cache: cache, name: o.Identity, ran: map[string]bool{},
		log: o.Logger, done: make(chan struct{})}
	f.metrics = newWorkerMetrics(func() float64 { return float64(f.running.Load()) }, func() float64 { return float64(cache.size.Load()) })
	c, err := o.dial("skillhost-worker", f.metrics.sdk.handler())
	if err != nil {
		local.Close()
		return nil, err
	}
	f.client = c
	f.worker = worker.New(c, o.taskQueue(), worker.Options{
		MaxConcurrentActivityExecutionSize: o.Concurrency,
		// Output and cancellation travel on heartbeats: sent often, they
		// keep both prompt.
		MaxHeartbeatThrottleInterval:     200 * time.Millisecond,
		DefaultHeartbeatThrottleInterval: 200 * time.Millisecond,
		DisableWorkflowWorker:            true,
		// The version rides in the poller's identity: doctor on a host
		// lists the workers of its task queue with theirs.
		Identity:          fmt.Sprintf("%s (skillhost-worker %s)", o.Identity, Version),
		WorkerStopTimeout: o.StopTimeout,
	})
	f.worker.RegisterActivityWithOptions(f.exec, activity.RegisterOptions{Name: ExecActivity})
	if err := f.worker.Start(); err != nil {
		f.Stop()
		return nil, fmt.Errorf("start the worker on task queue %s: %w", o.taskQueue(), err)
	}
	if o.MetricsAddr != "" {
		if err := f.serveHTTP(o.MetricsAddr); err != nil {
			f.Stop()
			return nil, err
		}
	}
	f.log.Info("connected", "address", o.Address, "namespace", o.namespace(), "task_queue", o.taskQueue())
	go f.watchConnection()
	return f, nil
}

// watchConnection logs when the cluster stops answering and when it
// answers again, as long as the worker serves.
func (f *Fleet) watchConnection() {
	serving, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { <-f.done; stop() }()
	tick := time.NewTicker(connectionEvery)
	defer tick.Stop()
	var lostAt time.Time
	for {
		select {
		case <-serving.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(serving, connectionEvery)
		_, err := f.client.CheckHealth(ctx, &client.CheckHealthRequest{})
		cancel()
		if serving.Err() != nil {
			return
		}
		switch {
		case err != nil && lostAt.IsZero():
			lostAt = time.Now()
			f.lost.Store(true)
			f.log.Warn("lost the cluster", "address", f.opts.Address, "error", err.Error(), "running", f.Running())
		case err == nil && !lostAt.IsZero():
			f.lost.Store(false)
			f.log.Info("reconnected", "address", f.opts.Address, "after", time.Since(lostAt).Round(time.Millisecond).String())
			lostAt = time.Time{}
		}
	}
}

// connectionEvery paces the worker's checks of its connection.
const connectionEvery = 2 * time.Second

// Running is how many runs are in progress.
func (f *Fleet) Running() int { return int(f.running.Load()) }

// sweep removes what a worker that died left in its cache directory: the
// scratch of runs and half-fetched skills. (Workers sharing a cache
// directory must not: each has its own.)
func sweep(dir string) {
	for _, pattern := range []string{filepath.Join(dir, "run-*"), filepath.Join(dir, "skills", ".fetch-*")} {
		left, _ := filepath.Glob(pattern)
		for _, p := range left {
			_ = os.RemoveAll(p)
		}
	}
}

// launchLocal starts the local plugin that confines the worker's runs.
func launchLocal(o WorkerOptions) (*pluginclient.Conn, error) {
	c, err := pluginclient.Launch(pluginclient.LaunchConfig{
		Path: filepath.Join(o.PluginsDir, "skillhost-sandbox-"+o.Strategy), AutoMTLS: true,
		Env: []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()},
	})
	if err != nil {
		return nil, fmt.Errorf("start the %s plugin: %w", o.Strategy, err)
	}
	return c, nil
}

// plugin returns the local plugin, started again if it died: a worker
// whose plugin crashed would otherwise fail every job at once, and so take
// the most of them.
func (f *Fleet) plugin() (*pluginclient.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.local.Alive() {
		return f.local, nil
	}
	if f.stopped {
		// Stop closed it, or is about to: none is started that nothing
		// would close.
		return nil, errors.New("the worker is stopping")
	}
	f.local.Close()
	f.log.Warn("the local plugin died; starting it again", "strategy", f.opts.Strategy)
	c, err := launchLocal(f.opts)
	if err != nil {
		return nil, err
	}
	// Counted once it started again, as the metric's help says.
	f.metrics.pluginRestarts.Inc()
	f.local = c
	return c, nil
}

// Stop stops taking jobs, waits for running ones (up to StopTimeout), and
// stops the local plugin.
func (f *Fleet) Stop() {
	f.mu.Lock()
	if !f.stopped && f.done != nil {
		close(f.done)
	}
	f.stopped = true
	f.mu.Unlock()
	if f.worker != nil {
		f.worker.Stop()
	}
	f.client.Close()
	f.mu.Lock()
	f.local.Close()
	f.mu.Unlock()
	if f.http != nil {
		f.http.Close()
	}
}

// Name is the worker's identity.
func (f *Fleet) Name() string { return f.name }

// Jobs is how many runs this worker ran.
func (f *Fleet) Jobs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ran)
}

// Ran reports whether this worker ran the request with run id id (the
// run_id of the host's events).
func (f *Fleet) Ran(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ran[id]
}

// refuse fails a job before anything ran: not retried, and said plainly.
func refuse(format string, args ...any) error {
	return refuseFor("", fmt.Errorf(format, args...))
}

// refuseFor fails a job with the local plugin's refusal reason
// (shared.Reason*), which the host's error carries on: the CLI maps it to
// exit statuses and hints.
func refuseFor(reason string, err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), refusedType+reason, nil)
}

// refusedType starts an application error's type that is a refusal.
const refusedType = "skillhost.refused:"

// Reasons of a worker's own refusals (shared.RefusedFor of the host's
// error), besides the local plugin's.
const (
	// ReasonCeiling: the job's grant is over the worker's ceiling.
	ReasonCeiling = "ceiling"
	// ReasonVersion: the job comes from a host the worker cannot serve
	// (a newer contract or release).
	ReasonVersion = "version"
)

// exec is the activity: one job, run under the local plugin, logged as
// it starts and ends (never its arguments, environment or output).
func (f *Fleet) exec(ctx context.Context, job Job) (Outcome, error) {
	f.running.Add(1)
	defer f.running.Add(-1)
	f.metrics.started.Inc()
	start := time.Now()
	log := f.log.With("run_id", job.Request.RunID)
	log.Info("run started", "skill", job.Request.Skill.Digest, "job", job.ID)
	var ran bool
	out, err := f.run(ctx, job, &ran)
	f.count(ran, err, out.Result, time.Since(start))
	took := time.Since(start).Round(time.Millisecond).String()
	var ae *temporal.ApplicationError
	switch {
	case err == nil && out.Result.TimedOut:
		log.Info("run ended", "outcome", "timed_out", "exit_code", out.Result.ExitCode, "duration", took)
	case err == nil && out.Result.Signal != "":
		log.Info("run ended", "outcome", "killed", "exit_code", out.Result.ExitCode, "signal", out.Result.Signal, "duration", took)
	case err == nil:
		outcome := "ok"
		if out.Result.ExitCode != 0 {
			outcome = "failed"
		}
		log.Info("run ended", "outcome", outcome, "exit_code", out.Result.ExitCode, "duration", took)
	case errors.Is(err, context.Canceled) || temporal.IsCanceledError(err):
		log.Info("run ended", "outcome", "cancelled", "duration", took)
	case errors.Is(err, errClusterLost):
		log.Warn("run ended", "outcome", "cluster_lost", "duration", took)
	case !ran && errors.As(err, &ae):
		// The worker's own words, from before the script was started:
		// they name the grant, never the command's arguments.
		log.Warn("run ended", "outcome", "refused", "reason", ae.Message(), "duration", took)
	default:
		// What the local plugin said may quote the command: only its
		// reason code is logged.
		log.Warn("run ended", "outcome", "error", "reason", shared.RefusedFor(err), "duration", took)
	}
	return out, err
}

// count counts a job that ended in the metrics.
func (f *Fleet) count(ran bool, err error, res shared.Result, took time.Duration) {
	switch {
	case !ran:
		f.metrics.refused.Inc()
		return
	case err == nil && res.ExitCode == 0 && !res.TimedOut && res.Signal == "":
		f.metrics.completed.Inc()
	default:
		f.metrics.failed.Inc()
	}
	f.metrics.duration.Observe(took.Seconds())
}

// run is exec's work; ran says whether the local plugin was asked to run
// the script.
func (f *Fleet) run(ctx context.Context, job Job, ran *bool) (Outcome, error) {
	if why := skew(f.name, job); why != "" {
		return Outcome{}, refuseFor(ReasonVersion, errors.New(why))
	}
	if missing := lacks(f.info.Enforces, job.Require); missing != "" {
		return Outcome{}, refuse("worker %s runs the %s strategy, which does not enforce %s; the host's temporal settings claim it", f.name, f.opts.Strategy, missing)
	}
	if why := f.opts.Ceiling.check(f.name, job.Request, f.opts.SharedPaths); why != "" {
		return Outcome{}, refuseFor(ReasonCeiling, errors.New(why))
	}
	// The job runs under jctx, which the SDK's cancelling ctx on one failed
	// heartbeat does not end (see jobContext); ctx's values stay.
	jctx, end := jobContext(ctx)
	defer end(nil)
	hb := newBeat(ctx, jctx, f.client, end)
	defer hb.stop()
	req, run, err := f.localRequest(jctx, job, hb)
	defer run.cleanup()
	if err != nil {
		return Outcome{}, err
	}
	local, err := f.plugin()
	if err != nil {
		return Outcome{}, refuse("worker %s: %v", f.name, err)
	}
	out := newSender(jctx, f.client, job.ID)
	// A worker that lost the cluster for the heartbeat timeout stops the
	// run: the cluster has given up on it by then, and nobody would take
	// its result.
	rctx, lost := context.WithCancelCause(jctx)
	defer lost(nil)
	limit := activity.GetInfo(ctx).HeartbeatTimeout
	if limit <= 0 {
		limit = 10 * time.Second
	}
	go watchCluster(rctx, f.client, f.opts.Address, limit, lost)
	*ran = true
	res, err := local.Execute(rctx, req, func(b []byte) error {
		out.write(b)
		return nil
	})
	sent, serr := out.flush()
	if jctx.Err() != nil {
		return Outcome{}, stoppedBy(f.name, ctx, jctx)
	}
	if cause := context.Cause(rctx); errors.Is(cause, errClusterLost) {
		return Outcome{}, cause
	}
	if err != nil {
		return Outcome{}, refuseFor(shared.RefusedFor(err), fmt.Errorf("worker %s: %w", f.name, err))
	}
	if serr != nil {
		return Outcome{}, refuse("worker %s: send the output: %v", f.name, serr)
	}
	res.Files, res.FilesTruncated = run.files(job.Request.FileLimit)
	res.Worker = f.name
	f.mu.Lock()
	f.ran[job.Request.RunID] = true
	f.mu.Unlock()
	return Outcome{ID: job.ID, Sum: job.Sum, Worker: f.name, Strategy: f.opts.Strategy, Result: res,
		Sent: sent}, nil
}

// lacks names the first claim of want that have does not make.
func lacks(have, want shared.Enforcement) string {
	for _, c := range []struct {
		name       string
		have, want bool
	}{
		{"fs_read", have.FSRead, want.FSRead}, {"fs_write", have.FSWrite, want.FSWrite}, {"network", have.Network, want.Network},
		{"timeout", have.Timeout, want.Timeout}, {"resource_limits", have.ResourceLimits, want.ResourceLimits},
		{"process_isolation", have.ProcessIsolation, want.ProcessIsolation}, {"egress", have.Egress, want.Egress},
	} {
		if c.want && !c.have {
			return c.name
		}
	}
	return ""
}

// localRun is what a job has on this worker besides its request.
type localRun struct {
	dir      string            // scratch, removed after the run
	writable map[string]string // logical path -> scratch directory, whose files go back
	release  func()            // ends the run's hold on its cached skill
}

func (r *localRun) cleanup() {
	if r.dir != "" {
		_ = os.RemoveAll(r.dir)
		r.dir = ""
	}
	if r.release != nil {
		r.release()
		r.release = nil
	}
}

// localRequest maps a job to a request of the local plugin.
func (f *Fleet) localRequest(ctx context.Context, job Job, hb *beat) (shared.Request, *localRun, error) {
	req := job.Request
	run := &localRun{writable: map[string]string{}}
	if f.opts.SharedPaths {
		return req, run, nil
	}
	if req.Skill.Digest == "" || req.Command.Script == "" {
		return req, run, refuse("worker %s does not see the host's files (start it with --shared-paths for that), and the request has no skill digest or command relative to the skill", f.name)
	}
	skillDir, fetched, err := f.cache.get(req.Skill.Digest, func(w io.Writer) error { return f.fetch(ctx, job, w, hb) })
	if err != nil {
		return req, run, refuse("worker %s: %v", f.name, err)
	}
	if fetched {
		f.metrics.cacheMisses.Inc()
	} else {
		f.metrics.cacheHits.Inc()
	}
	run.release = func() { f.cache.release(req.Skill.Digest) }
	scratch, err := os.MkdirTemp(f.opts.CacheDir, "run-")
	if err != nil {
		return req, run, err
	}
	run.dir = scratch
	os.Chmod(scratch, 0o755)
	local := map[string]string{} // host path -> local path
	local[req.SkillDir] = skillDir
	var read, write []string
	for i, m := range req.Mounts {
		switch {
		case m.Role == shared.MountSkill:
			continue
		case m.Role == shared.MountWorkspace && !m.Writable:
			// A workspace to read is the host's files, which this worker
			// does not have (a writable one starts empty and comes back).
			run.cleanup()
			return req, run, refuse("worker %s cannot read the workspace %s: it does not see the host's files; start workers with --shared-paths where they do (the same machine or the same network mounts), or run without the workspace (--workspace none, or skills.grants.NAME.workspace: none)", f.name, m.HostPath)
		case !m.Writable || m.Role == shared.MountPath:
			// A path mount is the host path itself; the worker has no
			// such path to offer, read or write.
			run.cleanup()
			return req, run, refuse("worker %s cannot see host path %s (%s mount); start workers with --shared-paths, or grant the skill no host path but the workspace", f.name, m.HostPath, m.Role)
		}
		d := filepath.Join(scratch, "mount", fmt.Sprint(i))
		if err := os.MkdirAll(d, 0o777); err != nil {
			run.cleanup()
			return req, run, err
		}
		os.Chmod(d, 0o777)
		local[m.HostPath] = d
		run.writable[m.Logical] = d
		write = append(write, d)
	}
	home := filepath.Join(scratch, "home")
	os.MkdirAll(home, 0o777)
	os.Chmod(home, 0o777)
	argv := []string{filepath.Join(skillDir, filepath.FromSlash(req.Command.Script))}
	if req.Command.Interpreter != "" {
		interp, err := exec.LookPath(req.Command.Interpreter)
		if err != nil {
			run.cleanup()
			return req, run, refuse("worker %s has no %s on its PATH", f.name, req.Command.Interpreter)
		}
		argv = append([]string{interp}, argv...)
	}
	argv = append(argv, req.Command.Args...)
	dir := local[req.Dir]
	if dir == "" {
		dir = home
	}
	var protected []string
	for _, p := range req.Grant.Protected {
		for h, l := range local {
			if rel, err := filepath.Rel(h, p); err == nil && !strings.HasPrefix(rel, "..") && h != req.SkillDir {
				protected = append(protected, filepath.Join(l, rel))
			}
		}
	}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home}
	for _, kv := range req.Env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "PATH" && k != "HOME" && k != "TMPDIR" && k != "PWD" && k != "PYTHONPATH" {
			env = append(env, kv)
		}
	}
	env = append(env, "PYTHONPATH="+skillDir)
	g := req.Grant
	g.FSRead, g.FSWrite, g.Protected = read, write, protected
	out := shared.Request{RunID: req.RunID, Argv: argv, Dir: dir, Env: env, Grant: g, SkillDir: skillDir,
		OutputLimit: req.OutputLimit, KillGrace: req.KillGrace, Limits: req.Limits}
	return out, run, nil
}

// fetch writes a job's skill tar, chunk by chunk, from the host's queue.
func (f *Fleet) fetch(ctx context.Context, job Job, w io.Writer, hb *beat) error {
	chunks := int((job.Request.Skill.Size + chunkSize - 1) / chunkSize)
	for i := range max(chunks, 1) {
		run, err := f.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: "skillhost-fetch-" + job.ID + "-" + newID()[:8], TaskQueue: job.HostQueue,
			WorkflowExecutionTimeout: 2 * time.Minute,
		}, FetchWorkflow, Chunk{Digest: job.Request.Skill.Digest, Index: i})
		if err != nil {
			return err
		}
		var data []byte
		if err := run.Get(ctx, &data); err != nil {
			return fmt.Errorf("chunk %d of %d: %w", i+1, chunks, err)
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		hb.beat()
	}
	return nil
}

// files collects what a run wrote in its writable scratch mounts, in path
// order, at most limit bytes (a file's path and framing count too) and
// maxFileCount files, by logical path. The run wrote these trees, so each
// file is opened beneath the mount's root, never through a link, without
// blocking, and read only if it is a regular file.
func (r *localRun) files(limit int64) ([]shared.File, bool) {
	var out []shared.File
	var total int64
	truncated := false
	logicals := make([]string, 0, len(r.writable))
	for l := range r.writable {
		logicals = append(logicals, l)
	}
	sort.Strings(logicals)
	for _, logical := range logicals {
		dir := r.writable[logical]
		root, err := os.OpenRoot(dir)
		if err != nil {
			continue
		}
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || truncated || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			path := filepath.ToSlash(filepath.Join(logical, rel))
			cost := info.Size() + int64(len(path)) + 64
			if total+cost > limit || len(out) == maxFileCount {
				truncated = true
				return fs.SkipAll
			}
			data, err := readPlain(root, rel, info.Size())
			if err != nil {
				return nil
			}
			total += cost
			out = append(out, shared.File{Path: path, Mode: uint32(info.Mode().Perm()), Data: data})
			return nil
		})
		root.Close()
	}
	return out, truncated
}

// readPlain reads the regular file rel beneath root, at most size bytes,
// refusing a link in its last component and anything but a regular file.
func readPlain(root *os.Root, rel string, size int64) ([]byte, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", rel)
	}
	return io.ReadAll(io.LimitReader(f, size))
}

// maxFileCount bounds the files a result carries.
const maxFileCount = 1000

// sender signals a run's output to its workflow, in order, in chunks of
// at most maxSignal bytes, while the run goes on.
type sender struct {
	ctx         context.Context
	c           client.Client
	wfID, runID string
	job         string

	mu      sync.Mutex
	wake    chan struct{}
	closing chan struct{} // closed by flush: no pause after that
	buf     []byte
	closed  bool
	seq     int64
	sent    int64
	err     error
	done    chan struct{}
}

func newSender(ctx context.Context, c client.Client, job string) *sender {
	info := activity.GetInfo(ctx)
	s := &sender{ctx: ctx, c: c, wfID: info.WorkflowExecution.ID, runID: info.WorkflowExecution.RunID, job: job,
		wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *sender) write(b []byte) {
	s.mu.Lock()
	s.buf = append(s.buf, b...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *sender) loop() {
	defer close(s.done)
	for {
		s.mu.Lock()
		if len(s.buf) == 0 {
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return
			}
			select {
			case <-s.wake:
			case <-s.ctx.Done():
				return
			}
			continue
		}
		n := min(len(s.buf), maxSignal)
		data := bytes.Clone(s.buf[:n])
		s.buf = s.buf[n:]
		seq := s.seq
		s.mu.Unlock()
		err := s.signal(OutputChunk{Run: s.job, Seq: seq, Data: data})
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		s.seq++
		s.sent += int64(n)
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			// A signal at most every 250 ms, what came meanwhile joined
			// into it: a chatty script must not spend the workflow's
			// budget of signals and events.
			select {
			case <-time.After(signalEvery):
			case <-s.closing:
			case <-s.ctx.Done():
			}
		}
	}
}

// signalEvery paces a run's output signals.
const signalEvery = 250 * time.Millisecond

// signal sends one chunk, trying again (the same chunk, so none is lost
// or repeated out of order) while the cluster refuses it and the run
// lasts.
func (s *sender) signal(c OutputChunk) error {
	wait := 100 * time.Millisecond
	for {
		err := s.c.SignalWorkflow(s.ctx, s.wfID, s.runID, OutputSignal, c)
		if err == nil || s.ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(wait):
		case <-s.ctx.Done():
			return err
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// flush sends what is left and returns how many bytes were sent.
func (s *sender) flush() (int64, error) {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, s.err
}
