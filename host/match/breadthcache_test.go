package match

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/matchtext"
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
	// Only the newest maxBreadthFiles files stay.
	keyOf := func(i int) string { return fmt.Sprintf("%032x%032x", i, 0) }
	for i := range maxBreadthFiles + 6 {
		k := keyOf(i + 1)
		c.Store(k, want)
		old := time.Now().Add(time.Duration(i-100) * time.Minute)
		os.Chtimes(c.path(k), old, old)
	}
	c.Store(keyOf(1000), want) // prunes
	files, _ := filepath.Glob(filepath.Join(dir, "breadth-*.json"))
	if len(files) != maxBreadthFiles {
		t.Errorf("%d files after pruning, want %d", len(files), maxBreadthFiles)
	}
	if _, ok := c.Load(keyOf(1)); ok {
		t.Error("the oldest file survived pruning")
	}
	if _, ok := c.Load(keyOf(1000)); !ok {
		t.Error("the newest file was pruned")
	}
	// A temporary file left by a process that died is removed once old.
	stale, fresh := filepath.Join(dir, ".breadth-1"), filepath.Join(dir, ".breadth-2")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)
	c.Store(keyOf(1001), want)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a two-hour-old temporary file survived: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a new temporary file was removed: %v", err)
	}
	// No directory: nothing stored, nothing loaded, no panic.
	DirBreadthCache("").Store(key, want)
	if _, ok := DirBreadthCache("").Load(key); ok {
		t.Error("an unnamed cache loaded something")
	}
}

func TestIdentityOf(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "skillhost")
	if err := os.WriteFile(exe, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	byFile := fmt.Sprintf("%s %d %d", exe, st.Size(), st.ModTime().UnixNano())
	found := func() (string, error) { return exe, nil }
	lost := func() (string, error) { return "", os.ErrNotExist }
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const path = "github.com/skillhost/skillhost"
	for _, c := range []struct {
		name       string
		bi         *debug.BuildInfo
		executable func() (string, error)
		want       string
	}{
		{"released", &debug.BuildInfo{Main: debug.Module{Path: path, Version: "v1.2.0"}}, found, path + "@v1.2.0"},
		{"clean checkout", &debug.BuildInfo{Main: debug.Module{Path: path, Version: "(devel)"}, Settings: vcs("abc123", "false")}, found, path + "@abc123"},
		// Go stamps a modified checkout "v0.0.0-<date>-<rev>+dirty", the
		// same for every edit: only the file can tell them apart.
		{"modified checkout, stamped", &debug.BuildInfo{Main: debug.Module{Path: path, Version: "v0.0.0-20261201165209-b6361c1c1d0a+dirty"}, Settings: vcs("b6361c1c1d0a", "true")}, found, byFile},
		{"modified checkout", &debug.BuildInfo{Main: debug.Module{Path: path, Version: "(devel)"}, Settings: vcs("abc123", "true")}, found, byFile},
		{"no VCS information", &debug.BuildInfo{Main: debug.Module{Path: path, Version: "(devel)"}}, found, byFile},
		{"no build information", nil, found, byFile},
		{"nothing to go by", nil, lost, ""},
	} {
		if got := identityOf(c.bi, c.executable); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func withBuildIdentity(t *testing.T, id string) {
	t.Helper()
	saved := buildIdentity
	buildIdentity = func() string { return id }
	t.Cleanup(func() { buildIdentity = saved })
}

// docsKey is breadthKey for docs, their fields hashed as Index does.
func docsKey(o LexicalOptions, docs []Doc) string {
	d := newFieldDigest()
	for _, doc := range docs {
		f := fields(doc)
		d.add(f[:]...)
	}
	return breadthKey(o, d.sum())
}

func TestBreadthKey(t *testing.T) {
	withBuildIdentity(t, "test build")
	o := LexicalOptions{}.withDefaults()
	base := docsKey(o, breadthDocs)
	if len(base) != 64 {
		t.Fatalf("key %q", base)
	}
	changedDoc := slices.Clone(breadthDocs)
	changedDoc[1].Body = "A line more."
	semantic := o
	semantic.Semantic = 2
	strength := o
	strength.Breadth, strength.BreadthCentre = 3, 0.1
	lent := o
	lent.Examples = 2
	for _, c := range []struct {
		name string
		key  string
		same bool
	}{
		{"same inputs", docsKey(o, breadthDocs), true},
		{"the breadth's own strength and centre", docsKey(strength, breadthDocs), true},
		{"a body changed", docsKey(o, changedDoc), false},
		{"a skill fewer", docsKey(o, breadthDocs[:1]), false},
		{"another option", docsKey(semantic, breadthDocs), false},
		{"other requests lent", docsKey(lent, breadthDocs), false},
	} {
		if (c.key == base) != c.same {
			t.Errorf("%s: key %s, base %s, want same=%v", c.name, c.key, base, c.same)
		}
	}
	for name, given := range map[string]LexicalOptions{
		"background":   {Background: []string{"a message"}},
		"word vectors": {Vectors: &matchtext.WordVectors{}},
		"classifier":   {EverydayModel: &matchtext.Everyday{}},
		"examples":     {ExampleSet: &matchtext.Examples{}},
	} {
		if k := docsKey(given.withDefaults(), breadthDocs); k != "" {
			t.Errorf("a given %s is cached under %q", name, k)
		}
	}
	withBuildIdentity(t, "another build")
	if docsKey(o, breadthDocs) == base {
		t.Error("another build has the same key")
	}
	withBuildIdentity(t, "")
	if k := docsKey(o, breadthDocs); k != "" {
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
	lexicalOf(t, nil, LexicalOptions{BreadthCache: cache})
	if cache.stores != 1 || cache.loads != 2 {
		t.Errorf("an empty catalog used the cache: %d loads, %d stores; want 2 and 1 as before", cache.loads, cache.stores)
	}
	for _, bad := range [][]float64{{0.5}, {0.5, 2}, {0.5, -0.1}} {
		cache.m[key] = bad
		if got := breadths(); !slices.Equal(got, measured) {
			t.Errorf("with the cache holding %v: breadths %v, want the measured %v", bad, got, measured)
		}
	}
}
