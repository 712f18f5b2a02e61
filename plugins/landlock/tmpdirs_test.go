package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// The listing follows /tmp: a directory made or removed shows at once,
// while /tmp is recent, and again once it has settled.
func TestTmpListing(t *testing.T) {
	tmp := t.TempDir()
	var l tmpListing
	check := func(want ...string) {
		t.Helper()
		if got := l.dirs(tmp); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("dirs = %q, want %q", got, want)
		}
	}
	check()
	if err := os.Mkdir(filepath.Join(tmp, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check("a")
	// Settled: the listing is kept, and a change still shows.
	later(t)
	check("a")
	if l.stamp.fi == nil {
		t.Fatal("a settled /tmp's listing was not kept")
	}
	if err := os.Mkdir(filepath.Join(tmp, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("a", "b")
	check("a", "b")
	if err := os.Remove(filepath.Join(tmp, "a")); err != nil {
		t.Fatal(err)
	}
	check("b")
}

// later moves the plugin's clock an hour on, for the rest of the test:
// every directory it looks at has settled.
func later(t *testing.T) {
	t.Cleanup(func() { clock = time.Now })
	clock = func() time.Time { return time.Now().Add(time.Hour) }
}

// A directory whose times were set back (rsync -a, tar) still counts as
// changed: its change time moved.
func TestDirStampSeesTimesSetBack(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	before := stampOf(dir)
	if err := os.Mkdir(filepath.Join(dir, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && stampOf(dir).same(before) {
		t.Error("an entry made and the times set back: the stamp is the same")
	}
}
