package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// wire is an event's JSON form.
type wire struct {
	Event          string          `json:"event"`
	Data           json.RawMessage `json:"data"`
	Timestamp      int64           `json:"timestamp"`
	SequenceNumber int64           `json:"sequence_number"`
	ID             string          `json:"id"`
}

// MarshalJSON renders the event as the reference's chunk. Its data is the
// JSON object of Data (an empty one for nil) with run_id, message_id and
// scope set from the envelope, its keys in alphabetical order; the
// values within are as Data's JSON has them. HTML characters are left as
// they are; an encoder that escapes them (json.Marshal) still does.
func (e Event) MarshalJSON() ([]byte, error) {
	data, err := e.dataJSON()
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", e.ID, err)
	}
	return encode(wire{Event: e.Event, Data: data, Timestamp: e.Timestamp, SequenceNumber: e.SequenceNumber, ID: e.ID})
}

// dataJSON is Data's JSON object with the envelope merged in.
func (e Event) dataJSON() (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if e.Data != nil {
		raw, err := encode(e.Data)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(raw, []byte("null")) {
			if err := json.Unmarshal(raw, &fields); err != nil {
				return nil, fmt.Errorf("data %T is not a JSON object: %w", e.Data, err)
			}
		}
	}
	for k, v := range map[string]string{"run_id": e.RunID, "message_id": e.MessageID, "scope": e.Scope} {
		q, err := encode(v)
		if err != nil {
			return nil, err
		}
		fields[k] = q
	}
	return encode(fields) // a map's keys come out sorted
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

// encode is json.Marshal without HTML escaping and the trailing newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
