package events

import "sync"

// Counter hands out sequence numbers. It is safe for concurrent use; the
// zero value starts at 0.
type Counter struct {
	mu sync.Mutex
	n  int64
}

// NewCounter returns a counter whose Current is start.
func NewCounter(start int64) *Counter { return &Counter{n: start} }

// Next increments the counter and returns the new value: the first call on
// a counter started at 0 returns 1.
func (c *Counter) Next() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

// Current returns the last value handed out (or the start) without
// advancing.
func (c *Counter) Current() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Reset sets the counter so that Current returns n.
func (c *Counter) Reset(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = n
}
