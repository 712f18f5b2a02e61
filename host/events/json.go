package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Field is one key of an event's data and its value.
type Field struct {
	Key   string
	Value any
}

// Fielder is a payload that lists the keys of its data object and their
// values, in any order, so that an event is written without encoding the
// payload and decoding it again (the host's run events, output deltas
// above all, are). Its fields must be the keys and values of the payload's
// own JSON object.
type Fielder interface {
	EventFields() []Field
}

// MarshalJSON renders the event as the reference's chunk:
// {"event","data","timestamp","sequence_number","id"}. Its data is the
// JSON object of Data (an empty one for nil) with run_id, message_id and
// scope set from the envelope, its keys in alphabetical order; the values
// within are as Data's JSON has them. HTML characters are left as they
// are; an encoder that escapes them (json.Marshal) still does.
func (e Event) MarshalJSON() ([]byte, error) { return e.appendJSON(nil) }

// appendJSON appends the event's JSON to b.
func (e Event) appendJSON(b []byte) ([]byte, error) {
	fields, err := e.fields()
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", e.ID, err)
	}
	b = append(b, `{"event":`...)
	if b, err = appendValue(b, e.Event); err != nil {
		return nil, err
	}
	b = append(b, `,"data":{`...)
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendValue(b, f.Key); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendValue(b, f.Value); err != nil {
			return nil, fmt.Errorf("event %s: data %s: %w", e.ID, f.Key, err)
		}
	}
	b = append(b, `},"timestamp":`...)
	b = strconv.AppendInt(b, e.Timestamp, 10)
	b = append(b, `,"sequence_number":`...)
	b = strconv.AppendInt(b, e.SequenceNumber, 10)
	b = append(b, `,"id":`...)
	b, err = appendValue(b, e.ID)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// fields are the data's keys and values, the envelope's included, sorted
// by key.
func (e Event) fields() ([]Field, error) {
	var fields []Field
	switch d := e.Data.(type) {
	case nil:
	case Fielder:
		fields = d.EventFields()
	default:
		raw, err := appendValue(nil, d)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("data %T is not a JSON object: %w", e.Data, err)
		}
		for k, v := range m {
			fields = append(fields, Field{k, v})
		}
	}
	fields = slices.DeleteFunc(fields, func(f Field) bool {
		return f.Key == "run_id" || f.Key == "message_id" || f.Key == "scope"
	})
	fields = append(fields, Field{"run_id", e.RunID}, Field{"message_id", e.MessageID}, Field{"scope", e.Scope})
	slices.SortStableFunc(fields, func(a, b Field) int { return strings.Compare(a.Key, b.Key) })
	return fields, nil
}

// wire is an event's JSON form, for reading it.
type wire struct {
	Event          string          `json:"event"`
	Data           json.RawMessage `json:"data"`
	Timestamp      int64           `json:"timestamp"`
	SequenceNumber int64           `json:"sequence_number"`
	ID             string          `json:"id"`
}

// UnmarshalJSON reads an event written by MarshalJSON: the envelope goes
// to RunID, MessageID and Scope, and Data is the data object as a
// json.RawMessage (see DecodeData).
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var env struct {
		RunID     string `json:"run_id"`
		MessageID string `json:"message_id"`
		Scope     string `json:"scope"`
	}
	if len(w.Data) > 0 && !bytes.Equal(w.Data, []byte("null")) {
		if err := json.Unmarshal(w.Data, &env); err != nil {
			return fmt.Errorf("event %s: data: %w", w.ID, err)
		}
	}
	*e = Event{Event: w.Event, Data: w.Data, RunID: env.RunID, MessageID: env.MessageID, Scope: env.Scope,
		Timestamp: w.Timestamp, SequenceNumber: w.SequenceNumber, ID: w.ID}
	return nil
}

// ErrNotDecoded is DecodeData's error for an event that was not decoded
// from JSON: its Data is already a value, to read with a type switch.
var ErrNotDecoded = errors.New("event data was not decoded from JSON; read it with a type switch")

// DecodeData decodes the data of an event read from JSON (UnmarshalJSON)
// into v, say a *host.OutputDelta; the envelope's keys are in it too.
func (e Event) DecodeData(v any) error {
	raw, ok := e.Data.(json.RawMessage)
	if !ok {
		return ErrNotDecoded
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("event %s: data: %w", e.ID, err)
	}
	return nil
}

// appendValue appends v's JSON, without HTML escaping, to b; a
// json.RawMessage is checked and compacted (an event is one line).
func appendValue(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if raw, ok := v.(json.RawMessage); ok {
		if err := json.Compact(buf, raw); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
