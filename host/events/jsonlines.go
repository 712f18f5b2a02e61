package events

import (
	"io"
	"sync"
)

// JSONLines returns a PublishFunc that writes each event to w as one line
// of JSON, as it is published. Writes are serialised, so concurrent
// publishers never interleave within a line. If w implements
// interface{ Flush() error }, it is flushed after every line.
func JSONLines(w io.Writer) PublishFunc {
	var mu sync.Mutex
	var buf []byte
	return func(e Event) error {
		mu.Lock()
		defer mu.Unlock()
		line, err := e.appendJSON(buf[:0])
		if err != nil {
			return err
		}
		buf = append(line, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if f, ok := w.(interface{ Flush() error }); ok {
			return f.Flush()
		}
		return nil
	}
}
