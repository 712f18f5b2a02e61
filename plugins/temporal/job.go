// Package temporal is the fleet backend: each run goes to a Temporal task
// queue, where a worker (this same binary, as `skillhost-sandbox-temporal
// worker`) runs it under a local sandbox plugin through
// shared/pluginclient, so a fleet confines with the same code, and is held
// to the same escape suite, as one machine.
//
// The pieces: the host-side Executor (this package's Executor) starts a
// workflow on a task queue of its own, which its own Temporal worker runs;
// the workflow schedules one activity, at most once, on the fleet's task
// queue (default "skillhost"). A fleet worker that does not hold the
// skill's files yet fetches them, by digest, from the host's task queue,
// and keeps them on disk. While the script runs, the worker signals its
// output to the workflow, which hands it to the host in order, and
// heartbeats every second; cancelling the call cancels the workflow, which
// cancels the activity, which hears it on the next heartbeat and kills the
// run's tree.
package temporal

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// Names on the cluster.
const (
	// DefaultTaskQueue is the fleet's task queue.
	DefaultTaskQueue = "skillhost"
	// RunWorkflow runs one job; the host's own worker runs it.
	RunWorkflow = "skillhost.run"
	// ExecActivity runs a job's script on a fleet worker.
	ExecActivity = "skillhost.exec"
	// FetchWorkflow and ChunkActivity serve a skill's canonical tar from
	// the host's task queue, one chunk a call.
	FetchWorkflow = "skillhost.fetch-skill"
	ChunkActivity = "skillhost.skill-chunk"
	// OutputSignal carries a run's output from the worker to the run's
	// workflow, which hands it to the host (EmitActivity, local).
	OutputSignal = "skillhost.output"
	EmitActivity = "skillhost.emit"
)

// Sizes that keep every payload under Temporal's default limit of 2 MiB.
const (
	chunkSize = 1 << 20
	// maxFiles is the most file data a result carries back; the rest is
	// left out, with files_truncated set.
	maxFiles = 1 << 20
	// maxSignal is the most output one signal carries.
	maxSignal = 256 << 10
)

// Job is one run as it travels to a fleet worker.
type Job struct {
	// ID names the run; the worker's Outcome repeats it.
	ID string
	// Sum is the SHA-256 of the request as the host sent it; the Outcome
	// repeats it, so a result can only be taken for the request it
	// answers.
	Sum string
	// Request is the host's request: host paths, plus the remote fields
	// (skill digest, command relative to the skill, mounts).
	Request shared.Request
	// HostQueue is where the worker fetches a skill it does not hold.
	HostQueue string
	// Require is what the worker's local strategy must enforce: what the
	// host-side plugin claims.
	Require shared.Enforcement
	// Contract is the version of the plugin contract (shared.Request's)
	// the host speaks, and HostVersion its release of this backend
	// (Version); a worker that cannot serve them refuses the job before
	// anything runs (see skew). Both are zero from a host before they
	// were carried.
	Contract    int
	HostVersion string
}

// Outcome is a worker's answer. The output went ahead of it, as
// OutputSignal signals, all of them sent before the Outcome.
type Outcome struct {
	ID, Sum string
	// Worker names the worker (host name and process id) and Strategy
	// the local plugin that confined the run.
	Worker, Strategy string
	Result           shared.Result
	// Sent is how many output bytes the worker signalled.
	Sent int64
}

// OutputChunk is one signal of a run's output, numbered from 0.
type OutputChunk struct {
	Run  string
	Seq  int64
	Data []byte
}

// Job and Outcome travel as gob inside Temporal's JSON payloads: JSON
// would replace bytes that are not UTF-8 in a path, an argument or the
// environment, which a run must get exactly.
type gobJSON struct{ Gob []byte }

func marshalGob(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return json.Marshal(gobJSON{b.Bytes()})
}

func unmarshalGob(data []byte, v any) error {
	var g gobJSON
	if err := json.Unmarshal(data, &g); err != nil {
		return err
	}
	return gob.NewDecoder(bytes.NewReader(g.Gob)).Decode(v)
}

type plainJob Job
type plainOutcome Outcome

// MarshalJSON implements json.Marshaler (see gobJSON).
func (j Job) MarshalJSON() ([]byte, error) { return marshalGob(plainJob(j)) }

// UnmarshalJSON implements json.Unmarshaler.
func (j *Job) UnmarshalJSON(data []byte) error { return unmarshalGob(data, (*plainJob)(j)) }

// MarshalJSON implements json.Marshaler (see gobJSON).
func (o Outcome) MarshalJSON() ([]byte, error) { return marshalGob(plainOutcome(o)) }

// UnmarshalJSON implements json.Unmarshaler.
func (o *Outcome) UnmarshalJSON(data []byte) error { return unmarshalGob(data, (*plainOutcome)(o)) }

// Chunk asks for one piece of a skill's canonical tar.
type Chunk struct {
	Digest string
	Index  int
}

// sumOf is the SHA-256 of a request's gob encoding: what the Outcome
// must repeat.
func sumOf(r shared.Request) string {
	var b bytes.Buffer
	_ = gob.NewEncoder(&b).Encode(r)
	h := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(h[:])
}

// activityTimeout is the longest a job may take once a worker has it: the
// run's timeout and kill grace, plus fetching its skill.
func activityTimeout(r shared.Request) time.Duration {
	t := r.Grant.Timeout
	if t <= 0 {
		t = time.Hour
	}
	return t + r.KillGrace + 2*time.Minute
}
