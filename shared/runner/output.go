package runner

import (
	"errors"
	"os"
)

// readChunk is the read size for command output; it keeps every emitted
// chunk well under any RPC message limit.
const readChunk = 32 << 10

// cappedOutput passes output on until limit bytes, then emits the truncation
// marker once and keeps draining so the writer never blocks on a full pipe.
type cappedOutput struct {
	limit     int64 // negative: no cap
	emit      func([]byte)
	total     int64
	truncated bool
}

func newCappedOutput(limit int64, emit func([]byte)) *cappedOutput {
	return &cappedOutput{limit: limit, emit: emit}
}

// drain copies r until EOF. When r's read deadline passes, it takes what
// the pipe already holds without waiting and stops: whatever the command
// wrote before its end is kept even if this goroutine only got to run
// after the deadline (a starved scheduler, a throttled CPU).
func (c *cappedOutput) drain(r *os.File) {
	buf := make([]byte, readChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.write(buf[:n])
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			readBuffered(r, buf, c.write)
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *cappedOutput) write(p []byte) {
	before := c.total
	c.total += int64(len(p))
	if c.limit < 0 {
		c.emit(append([]byte(nil), p...))
		return
	}
	keep := min(int64(len(p)), max(c.limit-before, 0))
	if keep > 0 {
		c.emit(append([]byte(nil), p[:keep]...))
	}
	if keep < int64(len(p)) && !c.truncated {
		c.truncated = true
		c.emit([]byte(TruncationMarker(c.limit)))
	}
}
