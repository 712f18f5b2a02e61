package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/host/grant"
)

// Output deltas carry whole characters even when a chunk ends inside one,
// and nothing is lost or reordered.
func TestRunEventsOutputSplitsOnCharacters(t *testing.T) {
	tests := []struct {
		chunks []string
		want   []string
	}{
		{[]string{"abc", "def"}, []string{"abc", "def"}},
		{[]string{"a\xc3", "\xa9b"}, []string{"a", "éb"}},
		{[]string{"\xe2", "\x82", "\xac!"}, []string{"€!"}},
		{[]string{"x\xf0\x9f", "\x98\x80"}, []string{"x", "😀"}},
		{[]string{"end\xe2\x82"}, []string{"end", "\xe2\x82"}},   // flushed at the end as it is
		{[]string{"\xff\xfe", "ok"}, []string{"\xff\xfe", "ok"}}, // invalid bytes are not held
	}
	for _, tt := range tests {
		var got []string
		ev := &runEvents{ctx: events.New(events.Options{RunID: "r", Publish: func(e events.Event) error {
			got = append(got, e.Data.(OutputDelta).Delta)
			return nil
		}})}
		for _, c := range tt.chunks {
			ev.output([]byte(c))
		}
		ev.flush()
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("chunks %q gave deltas %q, want %q", tt.chunks, got, tt.want)
		}
	}
	var nilEvents *runEvents
	nilEvents.output([]byte("x")) // publishes nothing, does not panic
	nilEvents.flush()
}

// A consumer that fails on every event neither stops the run nor floods the
// warnings.
func TestRunWithFailingConsumer(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var warnings strings.Builder
	h, err := Open(Options{SkillRoots: []string{"../examples/skills"}, Warnings: &warnings})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	calls := 0
	res, err := h.Run(context.Background(), RunRequest{
		Skill: "text-stats", Tool: "count", Args: []string{"../examples/data/article.txt"}, Strategy: InProcessName,
	}, func(events.Event) error { calls++; return errors.New("broken pipe") })
	if err != nil || !res.OK() || !strings.Contains(res.Output, "60 words") {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if calls < 4 {
		t.Errorf("consumer called %d times; want every event", calls)
	}
	if n := strings.Count(warnings.String(), "event consumer failed"); n != 1 || !strings.Contains(warnings.String(), "broken pipe") {
		t.Errorf("%d warnings:\n%s", n, warnings.String())
	}
}

// A tool run given an embedder's events context publishes as its child:
// its own run id, the parent's id in run.started, a fresh message id, the
// child scope and the parent's counter; to the parent's callback, or to
// Run's publish when that is given.
func TestRunAsChildOfParentContext(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h, err := Open(Options{SkillRoots: []string{"../examples/skills"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	req := RunRequest{Skill: "text-stats", Tool: "count", Args: []string{"../examples/data/article.txt"}, Strategy: InProcessName}
	tests := []struct {
		name      string
		own       bool // Run gets its own publish
		skill     string
		wantFirst string
		wantLast  string
	}{
		{"to the parent's callback", false, "text-stats", events.RunStarted, events.StreamEnded},
		{"to Run's publish", true, "text-stats", events.RunStarted, events.StreamEnded},
		{"a run that cannot start", false, "nope", events.RunFailed, events.StreamEnded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var toParent, toOwn []events.Event
			parent := events.New(events.Options{RunID: "turn-1", Scope: "agent", Publish: func(e events.Event) error {
				toParent = append(toParent, e)
				return nil
			}})
			parent.Publish(events.RunStarted, nil) // the turn's own first event: sequence 1
			var publish events.PublishFunc
			if tt.own {
				publish = func(e events.Event) error { toOwn = append(toOwn, e); return nil }
			}
			r := req
			r.Skill, r.Parent = tt.skill, parent
			_, err := h.Run(context.Background(), r, publish)
			if (err != nil) != (tt.skill == "nope") {
				t.Fatalf("run: %v", err)
			}
			got, other := toParent[1:], toOwn
			if tt.own {
				got, other = toOwn, toParent[1:]
			}
			if len(other) != 0 {
				t.Errorf("%d events went to the other callback", len(other))
			}
			if len(got) < 2 || got[0].Event != tt.wantFirst || got[len(got)-1].Event != tt.wantLast {
				t.Fatalf("events %v", names(got))
			}
			runID := got[0].RunID
			for i, e := range got {
				if e.SequenceNumber != int64(i+2) {
					t.Errorf("%s: sequence %d, want %d (the parent's counter)", e.Event, e.SequenceNumber, i+2)
				}
				if e.Scope != events.ChildScope || e.RunID != runID || runID == "turn-1" {
					t.Errorf("%s: scope %v, run id %v", e.Event, e.Scope, e.RunID)
				}
				if e.MessageID == parent.MessageID() || e.MessageID == "" {
					t.Errorf("%s: message id %v is not fresh", e.Event, e.MessageID)
				}
			}
			if s, ok := got[0].Data.(RunStarted); got[0].Event == events.RunStarted && (!ok || s.ParentRunID != "turn-1") {
				t.Errorf("run.started data %+v does not name the parent", got[0].Data)
			}
		})
	}
}

func names(evs []events.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Event)
	}
	return out
}

// The payloads that list their fields for the event writer
// (events.Fielder) list exactly their JSON's: an event written from the
// fields is the event written from the payload's JSON.
func TestPayloadFieldsMatchJSON(t *testing.T) {
	g := grant.Grant{FSRead: []string{"/r"}, Timeout: 1500 * time.Millisecond, Trust: grant.TrustExternal}
	payloads := []events.Fielder{
		RunStarted{Grant: g, Skill: "s", Strategy: "none", Tool: "t"},
		RunStarted{Grant: g, Skill: "s", Strategy: "none", Tool: "t", ParentRunID: "turn-1"},
		OutputDelta{Delta: "a < b && \x1b[0m é\xff\n"},
		StreamEnded{Reason: events.RunCompleted},
	}
	for _, p := range payloads {
		raw, err := marshalPlain(p) // as an event writes it: no HTML escaping
		if err != nil {
			t.Fatal(err)
		}
		typed := events.Event{Event: "e", Data: p, RunID: "r", MessageID: "m", Scope: ScopeTool}
		viaJSON := typed
		viaJSON.Data = json.RawMessage(raw)
		a, errA := typed.MarshalJSON()
		b, errB := viaJSON.MarshalJSON()
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%T: from its fields\n%s (%v)\nfrom its JSON\n%s (%v)", p, a, errA, b, errB)
		}
	}
}

// The last event of a run that could not run carries its error as it
// reads, HTML characters included, as the report's output does.
func TestEndedEventJSON(t *testing.T) {
	tests := []struct {
		data any
		want string
	}{
		{RunFailed{Error: `no tool "a<b>&c"`}, `{"error":"no tool \"a<b>&c\"","message_id":"m","run_id":"r","scope":"tool"}`},
		{RunInterrupted{Error: "stopped"}, `{"error":"stopped","message_id":"m","run_id":"r","scope":"tool"}`},
		{RunCompleted{Report: &RunReport{Output: "<ok>", Grant: grant.Grant{Timeout: time.Second, Trust: "external"}}},
			`{"duration_ms":0,"exit_code":0,"grant":{"fs_read":[],"fs_write":[],"network":false,"timeout":1,"trust":"external"},` +
				`"message_id":"m","not_enforced":[],"output":"<ok>","run_id":"r","scope":"tool","signal":"","skill":"","strategy":"",` +
				`"timed_out":false,"tool":"","truncated":false,"violations":[]}`},
	}
	for _, tt := range tests {
		var b strings.Builder
		events.New(events.Options{RunID: "r", MessageID: "m", Scope: ScopeTool, Publish: events.JSONLines(&b)}).Publish(events.RunFailed, tt.data)
		var e struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(b.String()), &e); err != nil || string(e.Data) != tt.want {
			t.Errorf("%T: data\n%s (%v)\nwant\n%s", tt.data, e.Data, err, tt.want)
		}
	}
}
