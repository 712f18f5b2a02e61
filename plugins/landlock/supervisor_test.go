package landlock_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/conformance"
)

// TestRunsUnderTheLeanSupervisor: launched as a host launches it, with
// skillhost-supervisor-landlock beside it, the plugin supervises each run
// with that binary, seen from outside while the run is under way: the
// suites of this package then test the supervisor a user's runs get.
func TestRunsUnderTheLeanSupervisor(t *testing.T) {
	lean := filepath.Join(filepath.Dir(testbin.Path(landlockPkg)), "skillhost-supervisor-landlock")
	if _, err := os.Stat(lean); err != nil {
		t.Fatalf("testbin did not build the supervisor beside the plugin: %v", err)
	}
	conn := conformance.Launch(t, testbin.Path(landlockPkg))
	if p, _ := conn.Probe(context.Background()); p.Status != shared.Healthy {
		t.Skipf("landlock is %s here: %s", p.Status, p.Reason)
	}
	dir := t.TempDir()
	req := shared.Request{
		Argv: []string{"/bin/sh", "-c", "echo ready; sleep 30"}, Dir: dir, SkillDir: dir,
		Env: []string{"PATH=/usr/bin:/bin"}, Grant: shared.Grant{Timeout: 2 * time.Minute}, OutputLimit: 1 << 20,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []string
	_, _ = conn.Execute(ctx, req, func(b []byte) error {
		if strings.Contains(string(b), "ready") {
			seen = processesOf(lean)
			cancel() // done looking: end the run
		}
		return nil
	})
	if len(seen) == 0 {
		t.Fatalf("no process ran %s while a run was under way", lean)
	}
	// Started through /proc/self/fd/N, it names itself after its binary
	// (the kernel keeps 15 bytes), not "100", for ps and top.
	for _, pid := range seen {
		comm, err := os.ReadFile(filepath.Join("/proc", pid, "comm"))
		if err == nil && strings.TrimSpace(string(comm)) != "skillhost-super" {
			t.Errorf("supervisor %s is named %q in ps, want %q", pid, strings.TrimSpace(string(comm)), "skillhost-super")
		}
	}
}

// processesOf lists the pids whose executable is path.
func processesOf(path string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == path {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
