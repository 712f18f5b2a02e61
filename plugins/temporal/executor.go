package temporal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend"
	"github.com/skillhost/skillhost/shared/pluginclient"
	"github.com/skillhost/skillhost/shared/skilltar"
)

// Version is the backend's version.
const Version = "0.1.0"

// Settings are the backend's settings, under plugins.config.temporal.
type Settings struct {
	Connection
	// QueueTimeout is how long a run may wait for a worker to take it, in
	// seconds (default 30): past it the run fails ("no worker on task
	// queue ... for 30 s") and nothing ran.
	QueueTimeout float64 `json:"queue_timeout"`
	// HeartbeatTimeout is how long a worker running a job may go silent,
	// in seconds (default 10): past it the run fails with the worker named,
	// and is not run again.
	HeartbeatTimeout float64 `json:"heartbeat_timeout"`
	// Enforces is what the fleet's workers guarantee, and this backend
	// claims; each job requires it of the worker that takes it. Default:
	// what the Landlock plugin enforces.
	Enforces *shared.Enforcement `json:"enforces"`
}

// landlockClaims is what a fleet of Landlock workers enforces.
var landlockClaims = shared.Enforcement{FSRead: true, FSWrite: true, Network: true, Timeout: true,
	ResourceLimits: true, ProcessIsolation: true, Egress: true}

func (s Settings) claims() shared.Enforcement {
	if s.Enforces != nil {
		e := *s.Enforces
		e.Timeout = true
		return e
	}
	return landlockClaims
}

func (s Settings) queueTimeout() time.Duration { return seconds(s.QueueTimeout, 30*time.Second) }
func (s Settings) heartbeat() time.Duration    { return seconds(s.HeartbeatTimeout, 10*time.Second) }

func seconds(v float64, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return time.Duration(v * float64(time.Second))
}

// Executor is the host side of the fleet: a shared.Executor that sends
// each run to the fleet's task queue.
type Executor struct {
	mu       sync.Mutex
	settings Settings
	conn     *hostConn

	// tars are the canonical tars of the skills of runs in progress, by
	// digest, served to workers that do not hold them.
	tarMu sync.Mutex
	tars  map[string]*tarRef

	// active counts the calls of Execute in progress: Close waits (a
	// while) for them, so a run being stopped can hear that it stopped.
	active sync.WaitGroup

	// streams are the runs in progress, by job id.
	streamMu sync.Mutex
	streams  map[string]*stream

	// Chunks counts the skill chunks served to workers (for tests and the
	// fleet example).
	Chunks atomic.Int64
	// Started, if set, is told each run's workflow id as it starts (to
	// look the run up on the cluster).
	Started func(workflowID string)
	// Job, if set, may change each job before it is sent: tests play a
	// host of another release with it.
	Job func(*Job)
}

type tarRef struct {
	data []byte
	refs int
}

// New returns the backend.
func New() *Executor { return &Executor{tars: map[string]*tarRef{}, streams: map[string]*stream{}} }

// SetConfig implements shared.Configurable.
func (e *Executor) SetConfig(_ context.Context, doc []byte) ([]shared.ConfigProblem, error) {
	var s Settings
	if problems := backend.DecodeConfig(doc, &s); len(problems) > 0 {
		return problems, nil
	}
	if problems := s.Connection.check(); len(problems) > 0 {
		return problems, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != nil {
		e.conn.retire()
		e.conn = nil
	}
	e.settings = s
	return nil, nil
}

// Info implements shared.Executor.
func (e *Executor) Info(context.Context) (shared.Info, error) {
	e.mu.Lock()
	claims := e.settings.claims()
	e.mu.Unlock()
	return shared.Info{Name: "temporal", Version: Version, ContractVersions: []int{shared.ContractVersion},
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Enforces: claims, Remote: true}, nil
}

// Probe implements shared.Executor: the cluster must answer.
func (e *Executor) Probe(ctx context.Context) (shared.Probe, error) {
	e.mu.Lock()
	s := e.settings
	e.mu.Unlock()
	if s.Address == "" {
		return shared.Probe{Status: shared.Unsupported, Reason: "no cluster: set plugins.config.temporal.address (host:port)"}, nil
	}
	c, err := e.connect()
	if err != nil {
		return shared.Probe{Status: shared.Unhealthy, Reason: err.Error()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.client.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return shared.Probe{Status: shared.Unhealthy, Reason: fmt.Sprintf("cluster %s: %v", s.Address, err)}, nil
	}
	return shared.Probe{Status: shared.Healthy, Reason: "runs go to task queue " + s.taskQueue() + " on " + s.Address,
		Details: map[string]string{"address": s.Address, "namespace": s.namespace(), "task_queue": s.taskQueue(),
			"workers": pollers(ctx, c.client, s.taskQueue())}}, nil
}

// NoWorkers starts the "workers" detail of a probe that found no worker
// polling the task queue.
const NoWorkers = "none"

// pollers names the workers polling queue for runs, with their versions
// (each worker's identity carries it): "2: a (skillhost-worker 0.1.0), b
// (...)", or NoWorkers and what that means. Temporal lists the workers
// that polled in the last minutes.
func pollers(ctx context.Context, c client.Client, queue string) string {
	desc, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return "unknown: " + err.Error()
	}
	var ids []string
	for _, p := range desc.GetPollers() {
		ids = append(ids, p.GetIdentity())
	}
	if len(ids) == 0 {
		return NoWorkers + ": no worker polls task queue " + queue + ", so runs wait queue_timeout and fail; start one with skillhost-sandbox-temporal worker (docs/fleet.md)"
	}
	sort.Strings(ids)
	return fmt.Sprintf("%d: %s", len(ids), strings.Join(ids, ", "))
}

// hostConn is the backend's client of the cluster and its own worker,
// which runs the run workflows and serves skill chunks.
type hostConn struct {
	client client.Client
	worker worker.Worker
	queue  string
	// runs are the runs using the connection: settings that change meanwhile
	// replace it for later runs, and it is closed once these end (its
	// worker hands them their output).
	runs sync.WaitGroup
}

func (c *hostConn) close() {
	c.worker.Stop()
	c.client.Close()
}

// retire closes the connection once its runs have ended.
func (c *hostConn) retire() {
	go func() {
		c.runs.Wait()
		c.close()
	}()
}

// use returns the connection for a run, which calls runs.Done when it
// ends.
func (e *Executor) use() (*hostConn, error) {
	c, err := e.connect()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != c { // replaced meanwhile
		return nil, errors.New("the temporal settings changed while the run started; try again")
	}
	c.runs.Add(1)
	return c, nil
}

// connect dials the cluster and starts the host's worker, once.
func (e *Executor) connect() (*hostConn, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != nil {
		return e.conn, nil
	}
	if e.settings.Address == "" {
		return nil, errors.New("no cluster: set plugins.config.temporal.address (host:port)")
	}
	c, err := e.settings.dial("skillhost-host", nil)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	queue := fmt.Sprintf("skillhost-host-%s-%d-%s", host, os.Getpid(), newID()[:8])
	w := worker.New(c, queue, worker.Options{})
	registerHost(w, e)
	if err := w.Start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("start the host's worker: %w", err)
	}
	e.conn = &hostConn{client: c, worker: w, queue: queue}
	return e.conn, nil
}

// Close stops the host's worker and closes the client, once the runs in
// progress have ended, or closeWait has passed: a run that is being
// stopped needs the host's worker, which runs its workflow, to hear the
// worker confirm it (a plugin whose host went away closes at once after
// cancelling its calls).
func (e *Executor) Close() error {
	idle := make(chan struct{})
	go func() { e.active.Wait(); close(idle) }()
	select {
	case <-idle:
	case <-time.After(closeWait):
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != nil {
		e.conn.close()
		e.conn = nil
	}
	return nil
}

// hold packs a run's skill, when the host described it for a remote run
// (its digest), checks it is still what the host described, and serves it
// while the run lasts. A request without a digest can only run on a worker
// that sees the host's files (--shared-paths), which says so otherwise.
func (e *Executor) hold(req *shared.Request) (release func(), err error) {
	if req.SkillDir == "" || req.Skill.Digest == "" {
		return func() {}, nil
	}
	release = func() {
		e.tarMu.Lock()
		defer e.tarMu.Unlock()
		if t := e.tars[req.Skill.Digest]; t != nil {
			if t.refs--; t.refs == 0 {
				delete(e.tars, req.Skill.Digest)
			}
		}
	}
	// A skill another run holds is already packed under this digest:
	// only a skill not held yet is packed (and checked).
	e.tarMu.Lock()
	if t := e.tars[req.Skill.Digest]; t != nil {
		t.refs++
		e.tarMu.Unlock()
		return release, nil
	}
	e.tarMu.Unlock()
	var buf bytes.Buffer
	digest, size, err := skilltar.Write(&buf, req.SkillDir)
	if err != nil {
		return nil, shared.Refused(shared.ReasonUnsupported, err)
	}
	if req.Skill.Digest != digest {
		return nil, fmt.Errorf("the skill at %s changed since the host described it (%s, now %s)", req.SkillDir, req.Skill.Digest, digest)
	}
	req.Skill.Size = size
	e.tarMu.Lock()
	defer e.tarMu.Unlock()
	t := e.tars[digest]
	if t == nil {
		t = &tarRef{data: buf.Bytes()}
		e.tars[digest] = t
	}
	t.refs++
	return release, nil
}

// chunk serves one piece of a held skill.
func (e *Executor) chunk(_ context.Context, c Chunk) ([]byte, error) {
	e.tarMu.Lock()
	t := e.tars[c.Digest]
	e.tarMu.Unlock()
	if t == nil {
		return nil, temporal.NewNonRetryableApplicationError("no run of this host holds skill "+c.Digest, "unknown-skill", nil)
	}
	start := c.Index * chunkSize
	if c.Index < 0 || start > len(t.data) {
		return nil, temporal.NewNonRetryableApplicationError("no chunk "+strconv.Itoa(c.Index), "bad-chunk", nil)
	}
	e.Chunks.Add(1)
	return t.data[start:min(start+chunkSize, len(t.data))], nil
}

// Execute implements shared.Executor: the run goes to the fleet, at most
// once; its output streams back while it runs.
func (e *Executor) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	e.active.Add(1)
	defer e.active.Done()
	e.mu.Lock()
	sealed := e.settings.CodecKeyFile != ""
	e.mu.Unlock()
	if g := req.Grant.Egress; g != nil && len(g.Credentials) > 0 && !sealed {
		return shared.Result{}, shared.Refused(shared.ReasonEgress, errors.New("the temporal strategy carries credentials only sealed: set plugins.config.temporal.codec_key_file (and --codec-key-file on the workers) so the cluster stores the request as ciphertext, or run skills with sandbox.credentials on a local strategy"))
	}
	conn, err := e.use()
	if err != nil {
		return shared.Result{}, err
	}
	defer conn.runs.Done()
	e.mu.Lock()
	s := e.settings
	e.mu.Unlock()
	release, err := e.hold(&req)
	if err != nil {
		return shared.Result{}, err
	}
	defer release()
	if req.FileLimit > maxFiles {
		req.FileLimit = maxFiles
	}
	job := e.newJob(req, conn.queue, s)
	// A caller that stops taking output (emit fails) ends the run, as a
	// local run would.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	st := &stream{emit: emit, stop: stop}
	e.streamMu.Lock()
	e.streams[job.ID] = st
	e.streamMu.Unlock()
	defer func() {
		e.streamMu.Lock()
		delete(e.streams, job.ID)
		e.streamMu.Unlock()
	}()
	in := flowInput{Job: job, Queue: s.taskQueue(), QueueTimeout: s.queueTimeout(), Heartbeat: s.heartbeat()}
	run, err := conn.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "skillhost-run-" + job.ID, TaskQueue: conn.queue,
		WorkflowExecutionTimeout: in.QueueTimeout + activityTimeout(req) + time.Minute,
	}, RunWorkflow, in)
	if err != nil {
		if ctx.Err() != nil {
			// The start may have reached the cluster: nobody would wait
			// for that run.
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = conn.client.CancelWorkflow(cctx, "skillhost-run-"+job.ID, "")
			cancel()
			// ctx is the caller's, or ended by the stream when the
			// caller stopped taking output: then that is the error.
			if err := st.failure(); err != nil {
				return shared.Result{}, err
			}
			return shared.Result{}, ctx.Err()
		}
		return shared.Result{}, fmt.Errorf("start the run on %s: %w", s.Address, err)
	}
	if e.Started != nil {
		e.Started(run.GetID())
	}
	var out Outcome
	// While the run lasts, the cluster must answer: a cluster gone for
	// the heartbeat timeout ends the wait with errClusterLost.
	wctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	go watchCluster(wctx, conn.client, s.Address, s.heartbeat(), lost)
	err = run.Get(wctx, &out)
	if ctx.Err() != nil {
		// The caller gave up (or stopped taking output): cancel the
		// workflow, which cancels the activity, which kills the run's
		// tree on the worker.
		stopErr := s.stop(conn.client, run, req)
		if err := st.failure(); err != nil {
			return shared.Result{}, err
		}
		return shared.Result{}, stopErr
	}
	if cause := context.Cause(wctx); errors.Is(cause, errClusterLost) {
		return shared.Result{}, cause
	}
	if err != nil {
		return shared.Result{}, s.explain(err)
	}
	if out.ID != job.ID || out.Sum != job.Sum {
		return shared.Result{}, fmt.Errorf("worker %s answered run %s (request %.12s) for run %s (request %.12s); refusing its result", out.Worker, out.ID, out.Sum, job.ID, job.Sum)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err != nil {
		return shared.Result{}, st.err
	}
	if st.sent != out.Sent {
		return shared.Result{}, fmt.Errorf("worker %s sent %d bytes of output and %d arrived", out.Worker, out.Sent, st.sent)
	}
	return out.Result, nil
}

// newJob is the job of req, whose worker fetches its skill from
// hostQueue.
func (e *Executor) newJob(req shared.Request, hostQueue string, s Settings) Job {
	id := req.RunID
	if id == "" {
		id = newID()
	}
	job := Job{ID: id + "-" + newID()[:8], Sum: sumOf(req), Request: req, HostQueue: hostQueue, Require: s.claims(),
		Contract: shared.ContractVersion, HostVersion: Version}
	if e.Job != nil {
		e.Job(&job)
	}
	return job
}

// stream is a run's output on its way to the caller: chunks are passed on
// in order, each once, in pieces of at most shared.MaxChunk.
type stream struct {
	mu   sync.Mutex
	emit func([]byte) error
	stop func() // ends the run when emit fails
	next int64  // the next chunk's number
	sent int64  // bytes passed on
	err  error
}

// failure is why the stream stopped passing output on (emit's error), if
// it did.
func (s *stream) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *stream) pass(c OutputChunk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Seq != s.next || s.err != nil {
		return // a repeat of a chunk already passed on
	}
	s.next++
	for data := c.Data; len(data) > 0 && s.err == nil; {
		n := min(len(data), shared.MaxChunk)
		s.err = s.emit(data[:n])
		s.sent += int64(n)
		data = data[n:]
	}
	if s.err != nil && s.stop != nil {
		s.stop()
	}
}

// emitChunk is the local activity that hands a chunk to its run.
func (e *Executor) emitChunk(_ context.Context, c OutputChunk) error {
	e.streamMu.Lock()
	s := e.streams[c.Run]
	e.streamMu.Unlock()
	if s != nil {
		s.pass(c)
	}
	return nil
}

// explain turns a failed run into the error the host shows.
func (s Settings) explain(err error) error {
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		switch te.TimeoutType() {
		case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
			return fmt.Errorf("no worker on task queue %s for %s: start workers (skillhost-sandbox-temporal worker --address %s --task-queue %s); nothing ran",
				s.taskQueue(), s.queueTimeout(), s.Address, s.taskQueue())
		case enumspb.TIMEOUT_TYPE_HEARTBEAT:
			return fmt.Errorf("the worker running it stopped answering for %s (it died or lost the cluster); the script may have run in part, and is not run again", s.heartbeat())
		}
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		if reason, ok := strings.CutPrefix(ae.Type(), refusedType); ok && reason != "" {
			return shared.Refused(reason, errors.New(ae.Message()))
		}
		return errors.New(ae.Message())
	}
	return fmt.Errorf("run on the fleet: %w", err)
}

// closeWait bounds how long Close waits for the runs in progress.
const closeWait = 30 * time.Second

// stop cancels a run whose caller gave up and waits, within a bound, for
// the worker to confirm: the workflow waits for the activity to end
// (WaitForCancellation), which ends once the worker's local plugin has
// been told to kill the run's tree. The error says what is known, with
// the reason pluginclient.ReasonStopped or ReasonStopUnconfirmed: the
// host says the run stopped only when it did.
func (s Settings) stop(c client.Client, run client.WorkflowRun, req shared.Request) error {
	bound := s.heartbeat() + max(req.KillGrace, 0) + 5*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := c.CancelWorkflow(ctx, run.GetID(), run.GetRunID()); err != nil {
		return shared.Refused(pluginclient.ReasonStopUnconfirmed, stopped("could not ask the worker to stop the run: the cluster at %s did not take the cancellation (%v); the worker stops it once it cannot reach the cluster either", s.Address, err))
	}
	var out Outcome
	err := run.Get(ctx, &out)
	var te *temporal.TimeoutError
	switch {
	case err == nil:
		return shared.Refused(pluginclient.ReasonStopped, stopped("the run had ended on worker %s before the stop reached it", out.Worker))
	case temporal.IsCanceledError(err):
		return shared.Refused(pluginclient.ReasonStopped, stopped("the worker stopped the run"))
	case errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return shared.Refused(pluginclient.ReasonStopUnconfirmed, stopped("asked the worker to stop the run; it stopped answering for %s (it died or lost the cluster), and has not confirmed", s.heartbeat()))
	case ctx.Err() != nil:
		return shared.Refused(pluginclient.ReasonStopUnconfirmed, stopped("asked the worker to stop the run; it has not confirmed within %s", bound))
	}
	return shared.Refused(pluginclient.ReasonStopUnconfirmed, stopped("asked the worker to stop the run; it has not confirmed (%v)", s.explain(err)))
}

// stopError is what a cancelled run ended with: it matches
// context.Canceled, and says how stopping it went.
type stopError struct{ msg string }

func (e *stopError) Error() string { return e.msg }
func (e *stopError) Unwrap() error { return context.Canceled }

func stopped(format string, args ...any) error {
	return &stopError{msg: fmt.Sprintf(format, args...)}
}

// errClusterLost is the cause of a run given up on because the cluster
// stopped answering.
var errClusterLost = errors.New("lost the cluster")

// watchCluster checks every second, until ctx ends, that the cluster
// answers; once it has not for limit, it ends ctx with errClusterLost,
// saying so. Without it, a run whose cluster went away would wait on a
// poll that fails a minute later with a bare "context deadline exceeded".
func watchCluster(ctx context.Context, c client.Client, address string, limit time.Duration, end context.CancelCauseFunc) {
	lastOK := time.Now()
	tick := time.NewTicker(healthEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		hctx, cancel := context.WithTimeout(ctx, healthEvery)
		_, err := c.CheckHealth(hctx, &client.CheckHealthRequest{})
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			lastOK = time.Now()
		case time.Since(lastOK) >= limit:
			end(fmt.Errorf("%w at %s: it has not answered for %s (%v); the run may have run in part, and its worker stops it once it cannot reach the cluster either",
				errClusterLost, address, limit.Round(time.Second), err))
			return
		}
	}
}

// healthEvery paces the checks that the cluster still answers.
const healthEvery = time.Second
