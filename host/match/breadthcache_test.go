package match

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDirBreadthCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "breadth")
	c := DirBreadthCache(dir)
	key := strings.Repeat("ab", 32)
	if _, ok := c.Load(key); ok {
		t.Fatal("an empty cache loaded something")
	}
	want := []float64{0.1, 0.025125628140703515, 0}
	c.Store(key, want)
	if got, ok := c.Load(key); !ok || !slices.Equal(got, want) {
		t.Fatalf("Load after Store = %v, %v; want %v", got, ok, want)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("cache directory: %v, %v; want mode 0700", st, err)
	}
	// Another key with the same file name is not this one.
	other := key[:32] + strings.Repeat("cd", 16)
	if _, ok := c.Load(other); ok {
		t.Error("a key sharing the file name loaded the other key's breadths")
	}
	// A damaged file is a miss, not an error.
	if err := os.WriteFile(c.path(key), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Load(key); ok {
		t.Error("a damaged file loaded")
	}
	// Only the newest MaxBreadthFiles files stay.
	keyOf := func(i int) string { return fmt.Sprintf("%032x%032x", i, 0) }
	for i := range MaxBreadthFiles + 6 {
		k := keyOf(i + 1)
		c.Store(k, want)
		old := time.Now().Add(time.Duration(i-100) * time.Minute)
		os.Chtimes(c.path(k), old, old)
	}
	c.Store(keyOf(1000), want) // prunes
	files, _ := filepath.Glob(filepath.Join(dir, "breadth-*.json"))
	if len(files) != MaxBreadthFiles {
		t.Errorf("%d files after pruning, want %d", len(files), MaxBreadthFiles)
	}
	if _, ok := c.Load(keyOf(1)); ok {
		t.Error("the oldest file survived pruning")
	}
	if _, ok := c.Load(keyOf(1000)); !ok {
		t.Error("the newest file was pruned")
	}
	// No directory: nothing stored, nothing loaded, no panic.
	DirBreadthCache("").Store(key, want)
	if _, ok := DirBreadthCache("").Load(key); ok {
		t.Error("an unnamed cache loaded something")
	}
}

func withBuildIdentity(t *testing.T, id string) {
	t.Helper()
	saved := buildIdentity
	buildIdentity = func() string { return id }
	t.Cleanup(func() { buildIdentity = saved })
}

func TestBreadthKey(t *testing.T) {
	withBuildIdentity(t, "test build")
	o := LexicalOptions{}.withDefaults()
	base := breadthKey(o, breadthDocs)
	if len(base) != 64 {
		t.Fatalf("key %q", base)
	}
	changedDoc := slices.Clone(breadthDocs)
	changedDoc[1].Body = "A line more."
	semantic := o
	semantic.Semantic = 2
	strength := o
	strength.Breadth, strength.BreadthCentre = 3, 0.1
	for _, c := range []struct {
		name string
		key  string
		same bool
	}{
		{"same inputs", breadthKey(o, breadthDocs), true},
		{"the breadth's own strength and centre", breadthKey(strength, breadthDocs), true},
		{"a body changed", breadthKey(o, changedDoc), false},
		{"a skill fewer", breadthKey(o, breadthDocs[:1]), false},
		{"another option", breadthKey(semantic, breadthDocs), false},
	} {
		if (c.key == base) != c.same {
			t.Errorf("%s: key %s, base %s, want same=%v", c.name, c.key, base, c.same)
		}
	}
	given := o
	given.Background = []string{"a message"}
	if k := breadthKey(given, breadthDocs); k != "" {
		t.Errorf("a given background is cached under %q", k)
	}
	withBuildIdentity(t, "another build")
	if breadthKey(o, breadthDocs) == base {
		t.Error("another build has the same key")
	}
	withBuildIdentity(t, "")
	if k := breadthKey(o, breadthDocs); k != "" {
		t.Errorf("an unknown build is cached under %q", k)
	}
}

// mapCache is a BreadthCache in memory that counts its calls.
type mapCache struct {
	m             map[string][]float64
	loads, stores int
}

func (c *mapCache) Load(key string) ([]float64, bool) {
	c.loads++
	b, ok := c.m[key]
	return b, ok
}

func (c *mapCache) Store(key string, b []float64) {
	c.stores++
	c.m[key] = slices.Clone(b)
}

// TestLexicalBreadthCache checks that the matcher stores what it
// measured, uses what the cache holds instead of measuring, and measures
// again when the cache holds something that cannot be breadths.
func TestLexicalBreadthCache(t *testing.T) {
	withBuildIdentity(t, "test build")
	cache := &mapCache{m: map[string][]float64{}}
	breadths := func() []float64 {
		t.Helper()
		ex, err := lexicalOf(t, breadthDocs, LexicalOptions{BreadthCache: cache}).Explain(context.Background(), "write a project plan")
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, x := range ex {
			out = append(out, x.Breadth)
		}
		return out
	}
	measured := breadths()
	if cache.stores != 1 || len(cache.m) != 1 {
		t.Fatalf("%d stores, %d keys after the first index; want 1 and 1", cache.stores, len(cache.m))
	}
	var key string
	for k := range cache.m {
		key = k
	}
	if !slices.Equal(cache.m[key], measured) {
		t.Errorf("stored %v, measured %v", cache.m[key], measured)
	}
	cache.m[key] = []float64{0.5, 0.25}
	if got := breadths(); !slices.Equal(got, []float64{0.5, 0.25}) || cache.stores != 1 {
		t.Errorf("with the cache holding [0.5 0.25]: breadths %v after %d stores; want the cache's, no new store", got, cache.stores)
	}
	for _, bad := range [][]float64{{0.5}, {0.5, 2}, {0.5, -0.1}} {
		cache.m[key] = bad
		if got := breadths(); !slices.Equal(got, measured) {
			t.Errorf("with the cache holding %v: breadths %v, want the measured %v", bad, got, measured)
		}
	}
}
