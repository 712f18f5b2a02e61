package denials

import "strings"

// CaptureLimit bounds the output a Capture keeps: denials show early, and a
// chatty script must not make the plugin hold all it printed.
const CaptureLimit = 256 << 10

// Capture keeps the first CaptureLimit bytes of a run's output for Scan.
// The zero value is ready; it is used from one goroutine, as emit is.
type Capture struct{ b strings.Builder }

// Tee returns an emit function that records what it passes on to emit.
func (c *Capture) Tee(emit func([]byte) error) func([]byte) error {
	return func(p []byte) error {
		if room := CaptureLimit - c.b.Len(); room > 0 {
			c.b.Write(p[:min(len(p), room)])
		}
		return emit(p)
	}
}

// String returns the captured output.
func (c *Capture) String() string { return c.b.String() }
