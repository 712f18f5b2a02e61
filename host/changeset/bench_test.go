package changeset

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// stageFiles makes a host tree and an upper layer of n changed files (half
// new, half modified) in dirs of 50.
func stageFiles(tb testing.TB, n int) (root, upper string) {
	tb.Helper()
	base := tb.TempDir()
	root, upper = filepath.Join(base, "root"), filepath.Join(base, "upper")
	for i := range n {
		rel := filepath.Join(fmt.Sprintf("d%03d", i/50), fmt.Sprintf("f%04d.txt", i))
		if i%2 == 0 {
			write(tb, filepath.Join(root, rel), "before\n")
		}
		write(tb, filepath.Join(upper, rel), fmt.Sprintf("after %d\n", i))
	}
	os.MkdirAll(root, 0o755)
	return root, upper
}

// BenchmarkApply1000 reads and applies 1,000 changed files: the cost the
// host adds after a staged run that changed that many (issue 34: under a
// second on a 2-core machine).
func BenchmarkApply1000(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		root, upper := stageFiles(b, 1000)
		b.StartTimer()
		cs, err := Scan(upper, root, 0)
		if err != nil {
			b.Fatal(err)
		}
		Apply(cs, New(nil, nil), func(c Change) string { return filepath.Join(upper, c.Rel()) }, "bench", time.Now(), nil)
		for _, c := range cs {
			if c.Outcome != Applied {
				b.Fatalf("%s: %s %s", c.Rel(), c.Outcome, c.Reason)
			}
		}
	}
}

// BenchmarkScanUnchanged reads a stage in which the run changed nothing:
// the cost of staging a run that writes nothing.
func BenchmarkScanUnchanged(b *testing.B) {
	base := b.TempDir()
	upper := filepath.Join(base, "upper")
	os.MkdirAll(upper, 0o700)
	for b.Loop() {
		if cs, err := Scan(upper, base, 0); err != nil || len(cs) != 0 {
			b.Fatal(cs, err)
		}
	}
}
