package events

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"
)

// Event is one published event. Its JSON form is the reference's chunk:
// {"event","data","timestamp","sequence_number","id"}, where data is the
// payload's JSON object with the envelope (run_id, message_id, scope)
// merged in, every key in alphabetical order (see MarshalJSON).
type Event struct {
	Event string
	// Data is the payload. The host's run events carry package host's
	// types (host.RunStarted, host.OutputDelta, host.RunCompleted,
	// host.RunFailed, host.RunInterrupted, host.StreamEnded): consumers
	// read them with a type switch. Other publishers' events carry what
	// they passed to Publish (nil for none). An event decoded from JSON
	// (UnmarshalJSON) carries the data object as a json.RawMessage; read it
	// with DecodeData.
	Data any
	// RunID, MessageID and Scope are the envelope of the context that
	// published the event; in JSON they are keys of data.
	RunID, MessageID, Scope string
	// Timestamp is the publication time in milliseconds since the epoch.
	Timestamp      int64
	SequenceNumber int64
	// ID is "publish-<sequence_number>:<event>".
	ID string
}

// PublishFunc receives every event a context publishes. An error it
// returns, or a panic, is reported and otherwise ignored: a consumer that
// fails never stops the run.
type PublishFunc func(Event) error

// Scope of the contexts Child creates, as in the reference.
const ChildScope = "robot"

// Options configure New.
type Options struct {
	RunID string
	// ParentRunID names the run this one is part of; empty for a top-level
	// run.
	ParentRunID string
	// MessageID is generated (a random UUID) when empty.
	MessageID string
	Scope     string
	// Publish receives events; nil drops them (they are still built and
	// returned).
	Publish PublishFunc
	// Counter is shared with the contexts this one is made from; nil means
	// a fresh counter starting at 0.
	Counter *Counter
	// OnError is told when Publish fails or panics; nil logs a warning with
	// log/slog's default logger.
	OnError func(error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Context publishes the events of one run. It is safe for concurrent use;
// events published from one goroutine reach the callback in sequence
// order, while concurrent publishers may reach it out of order (consumers
// that care sort by SequenceNumber).
type Context struct {
	runID, parentRunID, messageID, scope string

	publish PublishFunc
	counter *Counter
	onError func(error)
	now     func() time.Time
}

// New returns a context for one run.
func New(o Options) *Context {
	c := &Context{
		runID: o.RunID, parentRunID: o.ParentRunID, messageID: o.MessageID, scope: o.Scope,
		publish: o.Publish, counter: o.Counter, onError: o.OnError, now: o.Now,
	}
	if c.messageID == "" {
		c.messageID = NewMessageID()
	}
	if c.counter == nil {
		c.counter = NewCounter(0)
	}
	if c.onError == nil {
		c.onError = func(err error) { slog.Warn("streaming error", "err", err) }
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// RunID returns the run's id.
func (c *Context) RunID() string { return c.runID }

// ParentRunID returns the parent run's id, or "".
func (c *Context) ParentRunID() string { return c.parentRunID }

// MessageID returns the message id.
func (c *Context) MessageID() string { return c.messageID }

// Scope returns the scope.
func (c *Context) Scope() string { return c.scope }

// Counter returns the sequence counter this context draws from.
func (c *Context) Counter() *Counter { return c.counter }

// Publish builds an event, hands it to the callback and returns it. data
// is the event's payload (nil for none); it must marshal to a JSON object,
// or to null. The context's run_id, message_id and scope form the
// envelope, which wins over keys of the same name in data's JSON. The name
// is not checked against the known events, so callers may publish their
// own. A failing or panicking callback is reported through OnError; the
// event is returned either way.
func (c *Context) Publish(event string, data any) Event {
	seq := c.counter.Next()
	e := Event{
		Event:          event,
		Data:           data,
		RunID:          c.runID,
		MessageID:      c.messageID,
		Scope:          c.scope,
		Timestamp:      c.now().UnixMilli(),
		SequenceNumber: seq,
		ID:             fmt.Sprintf("publish-%d:%s", seq, event),
	}
	c.deliver(e)
	return e
}

func (c *Context) deliver(e Event) {
	if c.publish == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			c.onError(fmt.Errorf("publishing %s: callback panicked: %v", e.ID, r))
		}
	}()
	if err := c.publish(e); err != nil {
		c.onError(fmt.Errorf("publishing %s: %w", e.ID, err))
	}
}

// Child returns the context of a run started by this one: its run id is
// runID, its parent is this run, it has a fresh message id and the scope
// "robot", and it shares this context's callback and counter.
func (c *Context) Child(runID string) *Context {
	return New(Options{
		RunID: runID, ParentRunID: c.runID, Scope: ChildScope,
		Publish: c.publish, Counter: c.counter, OnError: c.onError, Now: c.now,
	})
}

// Sibling returns a context with its own run id, message id and scope that
// shares this context's callback and counter, and has no parent.
func (c *Context) Sibling(runID, messageID, scope string) *Context {
	return New(Options{
		RunID: runID, MessageID: messageID, Scope: scope,
		Publish: c.publish, Counter: c.counter, OnError: c.onError, Now: c.now,
	})
}

// PartID returns a fresh id for a message part:
// part_<first 8 characters of the message id>_<last 6 digits of the epoch
// milliseconds>_<8 random hex digits>, at most 29 characters.
func (c *Context) PartID() string {
	prefix := c.messageID
	for i, n := 0, 0; i < len(prefix); n++ {
		if n == 8 {
			prefix = prefix[:i]
			break
		}
		_, size := utf8.DecodeRuneInString(prefix[i:])
		i += size
	}
	return fmt.Sprintf("part_%s_%06d_%s", prefix, c.now().UnixMilli()%1_000_000, randomHex(4))
}

// StepID returns "publish-<current sequence number>:<base>" without
// advancing the counter.
func (c *Context) StepID(base string) string {
	return fmt.Sprintf("publish-%d:%s", c.counter.Current(), base)
}

// NewMessageID returns a random (version 4) UUID.
func NewMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
