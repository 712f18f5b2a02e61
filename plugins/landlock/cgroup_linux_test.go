package landlock

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
					sweepCgroups()
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait(); sweepCgroups() }()

	for i := range 300 {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(c.base, "run-test-"+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(i))
		err := joinCgroup(dir, cmd.Process.Pid)
		cmd.Process.Kill()
		cmd.Wait()
		if err != nil {
			t.Fatalf("join %d: %v", i, err)
		}
	}
}
