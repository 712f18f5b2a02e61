package host

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
)

// Two hosts in one program keep their own settings: plugin directories,
// strategies and one-shot runners. Neither's settings, runs or Close
// reach the other.
func TestTwoHostsSideBySide(t *testing.T) {
	noUserConfig(t)
	withNull, err := testbin.Build("./cmd/skillhost-sandbox-null")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(testbin.Cleanup)
	roots := []string{"../examples/skills"}
	a, err := Open(Options{SkillRoots: roots, PluginDirs: []string{withNull}, OneShot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(Options{SkillRoots: roots, PluginDirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	run := func(h *Host, strategy string) (*RunReport, error) {
		return h.Run(context.Background(), RunRequest{Skill: "text-stats", Tool: "count", Args: []string{"../examples/data/article.txt"}, Strategy: strategy}, nil)
	}
	var wg sync.WaitGroup
	results := make([]*RunReport, 2)
	errs := make([]error, 2)
	for i, c := range []struct {
		h        *Host
		strategy string
	}{{a, "null"}, {b, InProcessName}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = run(c.h, c.strategy)
		}()
	}
	wg.Wait()
	for i, want := range []string{"null", InProcessName} {
		if errs[i] != nil || results[i].ExitCode != 0 || results[i].Strategy != want {
			t.Fatalf("host %d with %s: %+v, %v", i, want, results[i], errs[i])
		}
	}
	if string(results[0].Output) != string(results[1].Output) {
		t.Errorf("the same tool printed %q under null and %q in process", results[0].Output, results[1].Output)
	}
	// b's plugin directory has no null plugin: a's is not b's.
	if _, err := run(b, "null"); err == nil || !strings.Contains(err.Error(), "null") {
		t.Errorf("host b ran the null plugin of host a's directory (err %v)", err)
	}
	// Closing the one-shot host leaves the other's runner working.
	a.Close()
	if res, err := run(b, InProcessName); err != nil || res.ExitCode != 0 {
		t.Errorf("host b after host a closed: %+v, %v", res, err)
	}
}
