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

// RunStarted is run.started's data: what runs, where, under which grant.
// Its fields are in the order of its JSON keys (alphabetical, as events
// are written).
type RunStarted struct {
	Grant grant.Grant `json:"grant"`
	// ParentRunID is the embedder's run the tool run is part of (see
	// RunRequest.Parent), or "".
	ParentRunID string `json:"parent_run_id,omitempty"`
	Skill       string `json:"skill"`
	Strategy    string `json:"strategy"`
	Tool        string `json:"tool"`
}

// OutputDelta is tool_call.output.delta's data: a piece of the output, in
// whole UTF-8 characters.
type OutputDelta struct {
	Delta string `json:"delta"`
}

// RunCompleted is run.completed's data: the report of a run that exited 0.
type RunCompleted struct{ Report *RunReport }

// RunFailed is run.failed's data: the report of a run that failed, or,
// when it could not run, Error (Report nil).
type RunFailed struct {
	Report *RunReport
	Error  string
}

// RunInterrupted is run.interrupted's data: the report of a run that its
// context stopped, or Error when it ended without one.
type RunInterrupted struct {
	Report *RunReport
	Error  string
}

// StreamEnded is stream.ended's data: Reason names the run's last event.
type StreamEnded struct {
	Reason string `json:"reason"`
}

// EventFields lists the keys of run.started's data (events.Fielder).
func (d RunStarted) EventFields() []events.Field {
	f := []events.Field{{Key: "grant", Value: d.Grant}, {Key: "skill", Value: d.Skill}, {Key: "strategy", Value: d.Strategy}, {Key: "tool", Value: d.Tool}}
	if d.ParentRunID != "" {
		f = append(f, events.Field{Key: "parent_run_id", Value: d.ParentRunID})
	}
	return f
}

// EventFields lists the key of a delta's data (events.Fielder): the
// output is encoded once, straight into the event's line.
func (d OutputDelta) EventFields() []events.Field {
	return []events.Field{{Key: "delta", Value: d.Delta}}
}

// EventFields lists the key of stream.ended's data (events.Fielder).
func (d StreamEnded) EventFields() []events.Field {
	return []events.Field{{Key: "reason", Value: d.Reason}}
}

// MarshalJSON renders the report (see endedJSON).
func (d RunCompleted) MarshalJSON() ([]byte, error) { return endedJSON(d.Report, "") }

// MarshalJSON renders the report, or {"error": ...}.
func (d RunFailed) MarshalJSON() ([]byte, error) { return endedJSON(d.Report, d.Error) }

// MarshalJSON renders the report, or {"error": ...}.
func (d RunInterrupted) MarshalJSON() ([]byte, error) { return endedJSON(d.Report, d.Error) }

// endedJSON is the data of a run's last event: the report's JSON with its
// keys in alphabetical order at every level (the form this event has
// always had), or the error.
func endedJSON(rep *RunReport, errText string) ([]byte, error) {
	if rep == nil {
		return marshalPlain(struct {
			Error string `json:"error"`
		}{errText})
	}
	raw, err := rep.MarshalJSON()
	if err != nil {
		return nil, err
	}
	// A map's keys come out sorted; numbers keep their digits.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return marshalPlain(v)
}

func (e *runEvents) started(p *prepared) {
	if e == nil {
		return
	}
	e.ctx.Publish(events.RunStarted, RunStarted{Skill: p.skill.Name, Tool: p.tool.Name, Strategy: p.strategy, Grant: p.grant, ParentRunID: e.ctx.ParentRunID()})
}

func (e *runEvents) output(b []byte) {
	if e == nil {
		return
	}
	if len(e.pending) > 0 {
		b = append(e.pending, b...)
	}
	cut := term.WholeRunes(b) // at most one incomplete character waits
	e.pending = append([]byte(nil), b[cut:]...)
	if cut > 0 {
		e.ctx.Publish(events.ToolCallOutputDelta, OutputDelta{Delta: string(b[:cut])})
	}
}

// flush publishes what output is held back, before the run's end.
func (e *runEvents) flush() {
	if e == nil || len(e.pending) == 0 {
		return
	}
	e.ctx.Publish(events.ToolCallOutputDelta, OutputDelta{Delta: string(e.pending)})
	e.pending = nil
}

// finished publishes how a run that got a report ended.
func (e *runEvents) finished(ctx context.Context, r *RunReport) {
	if e == nil {
		return
	}
	e.flush()
	switch {
	case ctx.Err() != nil:
		e.end(events.RunInterrupted, RunInterrupted{Report: r})
	case !r.OK():
		e.end(events.RunFailed, RunFailed{Report: r})
	default:
		e.end(events.RunCompleted, RunCompleted{Report: r})
	}
}

// failed publishes the end of a run that could not run or lost its plugin.
func (e *runEvents) failed(ctx context.Context, err error) {
	if e == nil {
		return
	}
	e.flush()
	if ctx.Err() != nil {
		e.end(events.RunInterrupted, RunInterrupted{Error: err.Error()})
		return
	}
	e.end(events.RunFailed, RunFailed{Error: err.Error()})
}

// end publishes the run's last event and stream.ended.
func (e *runEvents) end(name string, data any) {
	e.ctx.Publish(name, data)
	e.ctx.Publish(events.StreamEnded, StreamEnded{Reason: name})
}

// RunReport is one run's outcome as every interface reports it: what
// Host.Run returns, what `skillhost run --json` prints, what the run's
// last event carries, and what an MCP tool call returns as structured
// content. Lists are [] rather than null.
type RunReport struct {
	Skill string `json:"skill"`
	Tool  string `json:"tool"`
	// Output is the script's merged output, capped by
	// sandbox.output_limit; empty when RunRequest.ChunkedOutput kept it as
	// pieces (WriteText and MarshalJSON still have it).
	Output   string `json:"output"`
	ExitCode int    `json:"exit_code"`
	// Signal names the signal that killed the script ("SIGKILL"), or "".
	Signal     string      `json:"signal"`
	TimedOut   bool        `json:"timed_out"`
	Truncated  bool        `json:"truncated"`
	DurationMS int64       `json:"duration_ms"`
	Grant      grant.Grant `json:"grant"`
	Strategy   string      `json:"strategy"`
	// Violations are what the sandbox denied or the host found after the
	// run, in the plugin contract's form.
	Violations []shared.Violation `json:"violations"`
	// NotEnforced lists what the strategy did not enforce.
	NotEnforced []string `json:"not_enforced"`
	// Changes are a staged run's changes: applied, refused, conflicts,
	// kept; nil when the run could write nothing or wrote directly.
	Changes *ChangeReport `json:"changes,omitempty"`
	// Interrupted: a signal ended the run; the output is what came before.
	Interrupted bool `json:"interrupted,omitempty"`
	// Worker names the machine that ran a remote run, when the plugin
	// says.
	Worker string `json:"worker,omitempty"`

	chunks [][]byte // the output as it arrived (RunRequest.ChunkedOutput)
}

// MarshalJSON renders the report without HTML escaping: the output reads
// as the script printed it. Nil lists are [].
func (rep RunReport) MarshalJSON() ([]byte, error) {
	type plain RunReport // without this method
	p := plain(rep)
	p.Output = rep.outputString()
	if p.Violations == nil {
		p.Violations = []shared.Violation{}
	}
	if p.NotEnforced == nil {
		p.NotEnforced = []string{}
	}
	return marshalPlain(p)
}

// marshalPlain is json.Marshal without HTML escaping.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// outputString is the output as one string, from Output or, for a report
// that kept it as chunks (RunRequest.ChunkedOutput), from those.
func (rep *RunReport) outputString() string {
	if len(rep.chunks) == 0 {
		return rep.Output
	}
	var b strings.Builder
	for _, c := range rep.chunks {
		b.Write(c)
	}
	return b.String()
}

// runFailed wraps the error of a run that could not run.
func runFailed(p *prepared, err error) error {
	return fmt.Errorf("run %s/%s with %s: %w", p.skill.Name, p.tool.Name, p.strategy, err)
}
