package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reference case 81, and the sets' exact contents.
func TestNames(t *testing.T) {
	if got := len(All()); got != 20 {
		t.Fatalf("All has %d names, want 20", got)
	}
	want := "run.started run.completed run.failed run.interrupted step.started step.completed step.failed " +
		"part.created part.completed part.failed text.delta tool_call.arguments.delta tool_call.output.delta " +
		"reasoning.delta data.delta hitl.requested hitl.resolved usage.updated metadata.updated stream.ended"
	if got := strings.Join(All(), " "); got != want {
		t.Errorf("All = %s\nwant  %s", got, want)
	}
	if got := strings.Join(Lifecycle(), " "); got != "run.started run.completed run.failed run.interrupted" {
		t.Errorf("Lifecycle = %s", got)
	}
	if got := strings.Join(Delta(), " "); got != "text.delta tool_call.arguments.delta tool_call.output.delta reasoning.delta data.delta" {
		t.Errorf("Delta = %s", got)
	}
	All()[0] = "mutated"
	if All()[0] != RunStarted {
		t.Error("All returns the package's own slice")
	}

	tests := []struct {
		name                      string
		lifecycle, delta, isValid bool
	}{
		{"run.started", true, false, true},
		{"run.completed", true, false, true},
		{"run.interrupted", true, false, true},
		{"text.delta", false, true, true},
		{"tool_call.arguments.delta", false, true, true},
		{"tool_call.output.delta", false, true, true},
		{"stream.ended", false, false, true},
		{"invalid.event", false, false, false},
		{"RUN.STARTED", false, false, false},
		{" run.started", false, false, false},
		{"", false, false, false},
	}
	for _, tt := range tests {
		if got := IsLifecycle(tt.name); got != tt.lifecycle {
			t.Errorf("IsLifecycle(%q) = %v", tt.name, got)
		}
		if got := IsDelta(tt.name); got != tt.delta {
			t.Errorf("IsDelta(%q) = %v", tt.name, got)
		}
		if got := IsValid(tt.name); got != tt.isValid {
			t.Errorf("IsValid(%q) = %v", tt.name, got)
		}
	}
}

// Reference case 79.
func TestCounter(t *testing.T) {
	var zero Counter
	if zero.Current() != 0 || NewCounter(0).Current() != 0 {
		t.Error("a new counter does not start at 0")
	}
	if c := NewCounter(100); c.Current() != 100 {
		t.Errorf("NewCounter(100).Current() = %d", c.Current())
	}
	c := NewCounter(0)
	for want := int64(1); want <= 3; want++ {
		if got := c.Next(); got != want {
			t.Fatalf("Next = %d, want %d", got, want)
		}
	}
	if c.Current() != 3 || c.Current() != 3 {
		t.Error("Current advanced the counter")
	}
	c.Reset(10)
	if c.Current() != 10 || c.Next() != 11 {
		t.Error("Reset(10) did not set the counter to 10")
	}
	c.Reset(0)
	if c.Current() != 0 {
		t.Error("Reset(0) did not set the counter to 0")
	}
}

func TestCounterConcurrent(t *testing.T) {
	c := NewCounter(0)
	const workers, each = 8, 500
	seen := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				seen[w] = append(seen[w], c.Next())
			}
		}()
	}
	wg.Wait()
	got := map[int64]bool{}
	for _, s := range seen {
		for _, n := range s {
			if got[n] {
				t.Fatalf("sequence number %d handed out twice", n)
			}
			got[n] = true
		}
	}
	if len(got) != workers*each || c.Current() != workers*each {
		t.Fatalf("%d distinct numbers, Current %d; want %d", len(got), c.Current(), workers*each)
	}
}

// recorder collects published events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) publish(e Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return nil
}

func fixedClock() time.Time { return time.UnixMilli(1_700_000_123_456) }

// Reference case 80: readers, the event's shape, numbering.
func TestPublish(t *testing.T) {
	rec := &recorder{}
	c := New(Options{RunID: "parent_run", MessageID: "msg_123456789", Scope: "network", Publish: rec.publish, Now: fixedClock})
	if c.RunID() != "parent_run" || c.MessageID() != "msg_123456789" || c.Scope() != "network" || c.ParentRunID() != "" {
		t.Errorf("readers: %q %q %q %q", c.RunID(), c.MessageID(), c.Scope(), c.ParentRunID())
	}
	data := map[string]any{"delta": "Hello", "run_id": "spoofed", "scope": "spoofed"}
	e := c.Publish(TextDelta, data)
	if len(rec.events) != 1 {
		t.Fatalf("callback called %d times", len(rec.events))
	}
	got, _ := json.Marshal(rec.events[0])
	want := `{"event":"text.delta","data":{"delta":"Hello","message_id":"msg_123456789","run_id":"parent_run","scope":"network"},` +
		`"timestamp":1700000123456,"sequence_number":1,"id":"publish-1:text.delta"}`
	if string(got) != want {
		t.Errorf("event = %s\nwant    %s", got, want)
	}
	if e.ID != rec.events[0].ID {
		t.Error("Publish returned another event than it delivered")
	}
	if data["run_id"] != "spoofed" || len(data) != 3 {
		t.Error("Publish changed the caller's data")
	}
	c.Publish(TextDelta, nil)
	c.Publish("custom.event", nil) // names are not validated
	for i, e := range rec.events {
		if e.SequenceNumber != int64(i+1) {
			t.Errorf("event %d has sequence %d", i, e.SequenceNumber)
		}
	}
	if rec.events[2].ID != "publish-3:custom.event" {
		t.Errorf("third id = %q", rec.events[2].ID)
	}
}

func TestPublishRealClock(t *testing.T) {
	before := time.Now().UnixMilli()
	e := New(Options{RunID: "r"}).Publish(RunStarted, nil)
	if after := time.Now().UnixMilli(); e.Timestamp < before || e.Timestamp > after {
		t.Errorf("timestamp %d not within [%d, %d]", e.Timestamp, before, after)
	}
}

func TestChildAndSibling(t *testing.T) {
	rec := &recorder{}
	parent := New(Options{RunID: "parent_run", MessageID: "m1", Scope: "network", Publish: rec.publish})
	child := parent.Child("child_run")
	if child.RunID() != "child_run" || child.ParentRunID() != "parent_run" || child.Scope() != "robot" {
		t.Errorf("child: run %q parent %q scope %q", child.RunID(), child.ParentRunID(), child.Scope())
	}
	if child.MessageID() == "" || child.MessageID() == parent.MessageID() {
		t.Errorf("child message id %q is not fresh", child.MessageID())
	}
	if a, b := parent.Publish(RunStarted, nil), child.Publish(RunStarted, nil); a.SequenceNumber != 1 || b.SequenceNumber != 2 {
		t.Errorf("parent then child got %d, %d; want 1, 2", a.SequenceNumber, b.SequenceNumber)
	}
	if rec.events[1].RunID != "child_run" {
		t.Errorf("child's event names run %v", rec.events[1].RunID)
	}

	rec2 := &recorder{}
	first := New(Options{RunID: "first", MessageID: "m", Scope: "s", Publish: rec2.publish})
	first.Publish(RunStarted, nil)
	sib := first.Sibling("second", "m2", "tool")
	e := sib.Publish(RunStarted, nil)
	if e.SequenceNumber != 2 || e.RunID != "second" || e.MessageID != "m2" || e.Scope != "tool" || sib.ParentRunID() != "" {
		t.Errorf("sibling event %+v, parent %q", e, sib.ParentRunID())
	}
	if len(rec2.events) != 2 {
		t.Errorf("sibling does not share the callback: %d events", len(rec2.events))
	}
}

func TestFailingCallbacks(t *testing.T) {
	tests := []struct {
		name    string
		publish PublishFunc
		want    string
	}{
		{"error", func(Event) error { return errors.New("consumer gone") }, "publishing publish-1:run.started: consumer gone"},
		{"panic", func(Event) error { panic("boom") }, "publishing publish-1:run.started: callback panicked: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reported []error
			c := New(Options{RunID: "r", Publish: tt.publish, OnError: func(err error) { reported = append(reported, err) }})
			e := c.Publish(RunStarted, nil)
			if e.Event != RunStarted || e.SequenceNumber != 1 {
				t.Errorf("no event returned after a failing callback: %+v", e)
			}
			if len(reported) != 1 || reported[0].Error() != tt.want {
				t.Errorf("reported %v, want %q", reported, tt.want)
			}
			if e := c.Publish(RunCompleted, nil); e.SequenceNumber != 2 {
				t.Error("the context stopped working after a failing callback")
			}
		})
	}
	// The default reporter logs rather than failing.
	New(Options{RunID: "r", Publish: func(Event) error { panic("unreported") }}).Publish(RunStarted, nil)
	// No callback at all still builds events.
	if e := New(Options{RunID: "r"}).Publish(RunStarted, nil); e.SequenceNumber != 1 {
		t.Error("a context without a callback does not number events")
	}
}

func TestPartAndStepIDs(t *testing.T) {
	c := New(Options{RunID: "r", MessageID: "abcdef0123456789", Now: fixedClock})
	pattern := regexp.MustCompile(`^part_abcdef01_123456_[0-9a-f]{8}$`)
	a, b := c.PartID(), c.PartID()
	if !pattern.MatchString(a) || len(a) > 40 {
		t.Errorf("PartID = %q (%d chars)", a, len(a))
	}
	if a == b {
		t.Error("two part ids are equal")
	}
	if p := New(Options{RunID: "r", MessageID: "ab", Now: fixedClock}).PartID(); !strings.HasPrefix(p, "part_ab_123456_") {
		t.Errorf("short message id: %q", p)
	}
	if p := New(Options{RunID: "r", MessageID: "ééééééééééé"}).PartID(); !strings.HasPrefix(p, "part_éééééééé_") || len([]rune(p)) > 40 {
		t.Errorf("multibyte message id: %q", p)
	}
	if p := New(Options{RunID: "r"}).PartID(); len(p) > 40 || !strings.HasPrefix(p, "part_") {
		t.Errorf("generated message id: %q", p)
	}

	if s := c.StepID("tool_call"); s != "publish-0:tool_call" {
		t.Errorf("StepID = %q", s)
	}
	c.Publish(RunStarted, nil)
	c.Publish(StepStarted, nil)
	if s := c.StepID("tool_call"); s != "publish-2:tool_call" || c.Counter().Current() != 2 {
		t.Errorf("StepID = %q, counter %d", s, c.Counter().Current())
	}
}

func TestNewMessageID(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		id := NewMessageID()
		if !uuid.MatchString(id) || seen[id] {
			t.Fatalf("NewMessageID = %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
	if id := New(Options{RunID: "r"}).MessageID(); !uuid.MatchString(id) {
		t.Errorf("empty MessageID was not generated: %q", id)
	}
}

type flushWriter struct {
	bytes.Buffer
	flushes int
}

func (f *flushWriter) Flush() error { f.flushes++; return nil }

func TestJSONLines(t *testing.T) {
	w := &flushWriter{}
	c := New(Options{RunID: "r", MessageID: "m", Scope: "tool", Publish: JSONLines(w), Now: fixedClock})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Publish(ToolCallOutputDelta, map[string]any{"delta": strings.Repeat("<&>", i)})
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) != 50 || w.flushes != 50 {
		t.Fatalf("%d lines, %d flushes; want 50", len(lines), w.flushes)
	}
	seqs := map[int64]bool{}
	for _, l := range lines {
		var e Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		seqs[e.SequenceNumber] = true
	}
	if len(seqs) != 50 {
		t.Errorf("%d distinct sequence numbers", len(seqs))
	}
	if strings.Contains(w.String(), `\u003c`) {
		t.Error("HTML characters escaped")
	}
}

// payload is a typed payload, as the host publishes.
type payload struct {
	Delta string `json:"delta"`
	Zeta  int    `json:"zeta"`
	Alpha []int  `json:"alpha,omitempty"`
}

// An event's JSON has the payload's keys and the envelope's in one object,
// sorted, whatever the payload's type; decoded, it gives the envelope back
// and the data to DecodeData.
func TestEventJSON(t *testing.T) {
	tests := []struct {
		name string
		data any
		want string
	}{
		{"nil", nil, `{"message_id":"m","run_id":"r","scope":"tool"}`},
		{"map", map[string]any{"b": 1, "a": "<x>"}, `{"a":"<x>","b":1,"message_id":"m","run_id":"r","scope":"tool"}`},
		{"struct", payload{Delta: "d", Zeta: 2, Alpha: []int{1}}, `{"alpha":[1],"delta":"d","message_id":"m","run_id":"r","scope":"tool","zeta":2}`},
		{"spoofed envelope", map[string]string{"scope": "x", "run_id": "y"}, `{"message_id":"m","run_id":"r","scope":"tool"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			c := New(Options{RunID: "r", MessageID: "m", Scope: "tool", Publish: JSONLines(&b), Now: fixedClock})
			c.Publish(ToolCallOutputDelta, tt.data)
			want := `{"event":"tool_call.output.delta","data":` + tt.want + `,"timestamp":1700000123456,"sequence_number":1,"id":"publish-1:tool_call.output.delta"}` + "\n"
			if b.String() != want {
				t.Fatalf("JSON\n got %s\nwant %s", b.String(), want)
			}
			var e Event
			if err := json.Unmarshal(b.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			if e.RunID != "r" || e.MessageID != "m" || e.Scope != "tool" || e.SequenceNumber != 1 || e.Event != ToolCallOutputDelta {
				t.Errorf("decoded %+v", e)
			}
			var p payload
			if err := e.DecodeData(&p); err != nil {
				t.Fatal(err)
			}
			if want, ok := tt.data.(payload); ok && (p.Delta != want.Delta || p.Zeta != want.Zeta) {
				t.Errorf("DecodeData gave %+v, want %+v", p, want)
			}
		})
	}
	if err := New(Options{RunID: "r"}).Publish(RunStarted, payload{}).DecodeData(&payload{}); !errors.Is(err, ErrNotDecoded) {
		t.Errorf("DecodeData of a published event: %v", err)
	}
	var b bytes.Buffer
	var reported []error
	New(Options{RunID: "r", Publish: JSONLines(&b), OnError: func(err error) { reported = append(reported, err) }}).Publish(RunStarted, []int{1})
	if b.Len() != 0 || len(reported) != 1 || !strings.Contains(reported[0].Error(), "not a JSON object") {
		t.Errorf("data that is not an object: wrote %q, reported %v", b.String(), reported)
	}
}
