package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// The expansion follows the directory: an entry made or removed shows at
// once, while the directory is recent and once it has settled; a settled
// directory's expansion is kept.
func TestGlobCache(t *testing.T) {
	dir := t.TempDir()
	pattern := filepath.Join(dir, "python3.*")
	var c globCache
	check := func(want ...string) {
		t.Helper()
		got, err := c.glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			want[i] = filepath.Join(dir, want[i])
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("glob = %q, want %q", got, want)
		}
	}
	touch := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reads := 0
	c.read = func(p string) ([]string, error) {
		reads++
		return filepath.Glob(p)
	}
	check()
	touch("python3.11")
	touch("perl")
	check("python3.11")
	// Settled: the expansion is kept, and not read again.
	later(t)
	check("python3.11")
	if c.entries[pattern].stamp.fi == nil {
		t.Fatal("a settled directory's expansion was not kept")
	}
	n := reads
	check("python3.11")
	if reads != n {
		t.Error("a kept expansion was read again")
	}
	// A change shows at once.
	touch("python3.12")
	check("python3.11", "python3.12")
	if err := os.Remove(filepath.Join(dir, "python3.11")); err != nil {
		t.Fatal(err)
	}
	check("python3.12")
}

// Build looks at each path once, though Landlock and the view both need it.
func TestBuildStatsEachPathOnce(t *testing.T) {
	seen := map[string]int{}
	stat := func(p string) (os.FileInfo, error) {
		seen[p]++
		return os.Stat(p)
	}
	dir := t.TempDir()
	req := shared.Request{SkillDir: dir, Dir: dir, Grant: shared.Grant{FSRead: []string{"/etc/hostname"}, FSWrite: []string{dir}}}
	Build(req, Env{ABI: 3, View: true, Stat: stat})
	if len(seen) == 0 {
		t.Fatal("Build looked at no path")
	}
	for p, n := range seen {
		if n > 1 {
			t.Errorf("Build looked at %s %d times", p, n)
		}
	}
}
