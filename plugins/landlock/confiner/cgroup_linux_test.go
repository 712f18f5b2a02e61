package confiner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// A helper joins its run cgroup while other runs end and sweep the empty
// ones: the join must win every time, or the run fails to start.
func TestJoinCgroupSurvivesConcurrentSweeps(t *testing.T) {
	cs := controllers()
	if len(cs) == 0 {
		t.Skip("no usable cgroup controller (needs root and a writable pids or memory cgroup)")
	}
	c := cs[0]
	if err := os.Mkdir(c.base, 0o755); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					SweepCgroups()
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait(); SweepCgroups() }()

	for i := range 300 {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(c.base, "run-"+strconv.Itoa(cmd.Process.Pid))
		err := joinCgroup(dir, cmd.Process.Pid)
		cmd.Process.Kill()
		cmd.Wait()
		if err != nil {
			t.Fatalf("join %d: %v", i, err)
		}
	}
}

// A sweep removes the cgroups of owners that are gone, and only those.
func TestSweepRemovesOnlyCgroupsOfDeadOwners(t *testing.T) {
	cs := controllers()
	if len(cs) == 0 {
		t.Skip("no usable cgroup controller (needs root and a writable pids or memory cgroup)")
	}
	c := cs[0]
	if err := os.MkdirAll(c.base, 0o755); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "30")
	dead := exec.Command("true")
	for _, cmd := range []*exec.Cmd{live, dead} {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	dead.Wait()
	defer func() { live.Process.Kill(); live.Wait() }()
	liveDir := filepath.Join(c.base, "run-"+strconv.Itoa(live.Process.Pid))
	deadDir := filepath.Join(c.base, "run-"+strconv.Itoa(dead.Process.Pid))
	for _, d := range []string{liveDir, deadDir} {
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	defer os.Remove(liveDir)
	SweepCgroups()
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Errorf("the cgroup of a dead owner survived the sweep: %v", err)
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("the sweep removed the empty cgroup of a live owner: %v", err)
	}
}
