package events

import (
	"encoding/json"
	"io"
	"sync"
)

// JSONLines returns a PublishFunc that writes each event to w as one line
// of JSON, as it is published. Writes are serialised, so concurrent
// publishers never interleave within a line. If w implements
// interface{ Flush() error }, it is flushed after every line.
func JSONLines(w io.Writer) PublishFunc {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return func(e Event) error {
		mu.Lock()
		defer mu.Unlock()
		if err := enc.Encode(e); err != nil {
			return err
		}
		if f, ok := w.(interface{ Flush() error }); ok {
			return f.Flush()
		}
		return nil
	}
}
