package landlock

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// globCache expands the patterns of systemEtc for every run, reading the
// directory a pattern names again only when its entries changed, by the
// stamps and the settling rule of tmpListing: /etc holds hundreds of
// entries, and reading it cost each warm call 0.08 ms. A pattern with
// metacharacters before its last element is expanded every time.
type globCache struct {
	mu      sync.Mutex
	entries map[string]globEntry
	read    func(string) ([]string, error) // filepath.Glob if nil; tests count
}

type globEntry struct {
	stamp   dirStamp
	matches []string
}

// glob is filepath.Glob; the caller must not change the result.
func (c *globCache) glob(pattern string) ([]string, error) {
	dir := filepath.Dir(pattern)
	if strings.ContainsAny(dir, `*?[\`) {
		return filepath.Glob(pattern)
	}
	stamp, keep := stampNow(dir)
	c.mu.Lock()
	e, ok := c.entries[pattern]
	c.mu.Unlock()
	if ok && stamp.same(e.stamp) {
		return e.matches, nil
	}
	read := c.read
	if read == nil {
		read = filepath.Glob
	}
	matches, err := read(pattern)
	if err != nil {
		return nil, err
	}
	matches = slices.Clip(matches)
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]globEntry{}
	}
	c.entries[pattern] = globEntry{stamp: keep, matches: matches}
	c.mu.Unlock()
	return matches, nil
}
