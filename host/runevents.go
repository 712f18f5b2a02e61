package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/term"
	"github.com/skillhost/skillhost/shared"
)

// ScopeTool is the scope of the events of a tool run.
const ScopeTool = "tool"

// runEvents publishes the events of one tool run, in this order:
// run.started, tool_call.output.delta per output chunk, one of
// run.completed, run.failed or run.interrupted, then stream.ended. A nil
// *runEvents publishes nothing.
type runEvents struct {
	ctx *events.Context
	// pending holds the start of a UTF-8 sequence split across chunks, so
	// every delta is whole characters.
	pending []byte
}

// newRunEvents returns nil when nobody listens. With a parent the run's
// context is its child (see RunRequest.Parent).
func (h *Host) newRunEvents(runID string, parent *events.Context, publish events.PublishFunc) *runEvents {
	if parent != nil && publish == nil {
		return &runEvents{ctx: parent.Child(runID)}
	}
	if publish == nil {
		return nil
	}
	// A consumer that is gone fails on every event; say so once per run.
	var reported atomic.Bool
	opts := events.Options{
		RunID: runID, Scope: ScopeTool, Publish: publish,
		OnError: func(err error) {
			if reported.CompareAndSwap(false, true) {
				h.Warn("run %s: event consumer failed (the run goes on; later failures are not reported): %v", runID, err)
			}
		},
	}
	if parent != nil {
		opts.ParentRunID, opts.Scope, opts.Counter = parent.RunID(), events.ChildScope, parent.Counter()
	}
	return &runEvents{ctx: events.New(opts)}
}

func (e *runEvents) started(p *prepared) {
	if e == nil {
		return
	}
	data := map[string]any{"skill": p.skill.Name, "tool": p.tool.Name, "strategy": p.strategy, "grant": p.grant}
	if parent := e.ctx.ParentRunID(); parent != "" {
		data["parent_run_id"] = parent
	}
	e.ctx.Publish(events.RunStarted, data)
}

func (e *runEvents) output(b []byte) {
	if e == nil {
		return
	}
	b = append(e.pending, b...)
	cut := term.WholeRunes(b) // at most one incomplete character waits
	e.pending = append([]byte(nil), b[cut:]...)
	if cut > 0 {
		e.ctx.Publish(events.ToolCallOutputDelta, map[string]any{"delta": string(b[:cut])})
	}
}

// flush publishes what output is held back, before the run's end.
func (e *runEvents) flush() {
	if e == nil || len(e.pending) == 0 {
		return
	}
	e.ctx.Publish(events.ToolCallOutputDelta, map[string]any{"delta": string(e.pending)})
	e.pending = nil
}

// finished publishes how a run that got a result ended.
func (e *runEvents) finished(ctx context.Context, r *RunResult) {
	if e == nil {
		return
	}
	e.flush()
	name := events.RunCompleted
	switch {
	case ctx.Err() != nil:
		name = events.RunInterrupted
	case !r.OK():
		name = events.RunFailed
	}
	e.ctx.Publish(name, r.Report().eventData())
	e.ctx.Publish(events.StreamEnded, map[string]any{"reason": name})
}

// failed publishes the end of a run that could not run or lost its plugin.
func (e *runEvents) failed(ctx context.Context, err error) {
	if e == nil {
		return
	}
	e.flush()
	name := events.RunFailed
	if ctx.Err() != nil {
		name = events.RunInterrupted
	}
	e.ctx.Publish(name, map[string]any{"error": err.Error()})
	e.ctx.Publish(events.StreamEnded, map[string]any{"reason": name})
}

// RunReport is one run's outcome as every interface reports it: what
// `skillhost run --json` prints, what the run's last event carries, and
// what an MCP tool call returns as structured content. Lists are [] rather
// than null.
type RunReport struct {
	Skill       string             `json:"skill"`
	Tool        string             `json:"tool"`
	Output      string             `json:"output"`
	ExitCode    int                `json:"exit_code"`
	Signal      string             `json:"signal"`
	TimedOut    bool               `json:"timed_out"`
	Truncated   bool               `json:"truncated"`
	DurationMS  int64              `json:"duration_ms"`
	Grant       grant.Grant        `json:"grant"`
	Strategy    string             `json:"strategy"`
	Worker      string             `json:"worker,omitempty"` // the fleet worker that ran it (remote strategies)
	Violations  []shared.Violation `json:"violations"`
	NotEnforced []string           `json:"not_enforced"`
	// Changes are a staged run's changes: applied, refused, conflicts,
	// kept.
	Changes *ChangeReport `json:"changes,omitempty"`
	// Interrupted: a signal ended the run; the output is what came before.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Report is the result's RunReport.
func (r *RunResult) Report() RunReport {
	violations := r.Violations
	if violations == nil {
		violations = []shared.Violation{}
	}
	notEnforced := r.NotEnforced
	if notEnforced == nil {
		notEnforced = []string{}
	}
	rep := RunReport{
		Output: r.outputString(), ExitCode: r.ExitCode, Signal: r.Signal, TimedOut: r.TimedOut,
		Truncated: r.Truncated, DurationMS: r.Duration.Milliseconds(), Grant: r.Grant,
		Strategy: r.Strategy, Worker: r.Worker, Violations: violations, NotEnforced: notEnforced, Changes: r.Changes,
	}
	if r.Skill != nil {
		rep.Skill = r.Skill.Name
	}
	if r.Tool != nil {
		rep.Tool = r.Tool.Name
	}
	return rep
}

// MarshalJSON renders the result as its RunReport, with <, > and & left as
// they are (not \u003c...): the output reads as the script printed it.
func (r *RunResult) MarshalJSON() ([]byte, error) { return r.Report().MarshalJSON() }

// MarshalJSON renders the report without HTML escaping.
func (rep RunReport) MarshalJSON() ([]byte, error) {
	type plain RunReport // without this method
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(plain(rep)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// eventData is the report as an event's data: the same keys and values,
// decoded from its JSON form.
func (rep RunReport) eventData() map[string]any {
	raw, err := rep.MarshalJSON()
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		return map[string]any{"error": "encode the run's report: " + err.Error()}
	}
	return m
}

// outputString is the output as one string, from Output or, for a result
// kept as chunks (RunRequest.ChunkedOutput), from those.
func (r *RunResult) outputString() string {
	if r.Output != nil || len(r.chunks) == 0 {
		return string(r.Output)
	}
	var b strings.Builder
	for _, c := range r.chunks {
		b.Write(c)
	}
	return b.String()
}

// runFailed wraps the error of a run that could not run.
func runFailed(p *prepared, err error) error {
	return fmt.Errorf("run %s/%s with %s: %w", p.skill.Name, p.tool.Name, p.strategy, err)
}
