//go:build unix

package landlock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tree deeper than any descriptor limit goes, links and all, and a link
// out of it is removed, never followed.
func TestRemoveTreeDeep(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(base, "run")
	if err := os.Mkdir(top, 0o755); err != nil {
		t.Fatal(err)
	}
	// Built relative to a descriptor: the full path is far past PATH_MAX.
	dir, err := os.OpenRoot(top)
	if err != nil {
		t.Fatal(err)
	}
	rel := "."
	for i := range 4700 {
		rel = filepath.Join(rel, "d")
		if err := dir.Mkdir(rel, 0o755); err != nil {
			t.Fatalf("depth %d: %v", i, err)
		}
		if i%1000 == 0 {
			sub, err := dir.OpenRoot(rel)
			if err != nil {
				t.Fatal(err)
			}
			dir.Close()
			dir, rel = sub, "."
		}
	}
	if err := dir.WriteFile(filepath.Join(rel, "bottom"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir.Close()
	if err := os.Symlink(outside, filepath.Join(top, "link")); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(top); err != nil {
		t.Fatalf("removeTree: %v", err)
	}
	if _, err := os.Lstat(top); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", top, err)
	}
	if data, err := os.ReadFile(outside); err != nil || !strings.Contains(string(data), "keep") {
		t.Errorf("the link's target was touched: %q %v", data, err)
	}
}
