package landlock_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
	"github.com/skillhost/skillhost/shared/runner"
)

// TestLoad sends 500 runs, 32 at a time, through one Landlock plugin,
// mixing fast scripts, timeouts and large output. Every result must be its
// own run's, whole; afterwards no process of any run, no temporary
// directory, no socket and no run cgroup may be left.
func TestLoad(t *testing.T) {
	const runs, parallel = 500, 32
	tmp := t.TempDir() // the plugin's TMPDIR: its run directories and socket go here
	leakedBefore := leakedCgroups()
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: testbin.Path(landlockPkg), AutoMTLS: true,
		Env: append([]string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "GORACE=atexit_sleep_ms=0"}, loadEnv...)})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := conn.Probe(context.Background()); err != nil || p.Status != shared.Healthy {
		conn.Close()
		t.Skipf("the landlock plugin cannot confine here: %v %+v", err, p)
	}
	skill := t.TempDir()
	script := filepath.Join(skill, "load.sh")
	body := `#!/bin/bash
case "$KIND" in
fast) echo "run-$ID" ;;
slow) echo "start-$ID"; exec -a "loadtest-$ID" sleep 60 ;;
big) head -c 300000 /dev/zero | tr '\0' x; echo "end-$ID" ;;
esac
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	kinds := []string{"fast", "fast", "big", "slow"}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if failures++; failures <= 10 {
			t.Errorf(format, args...)
		}
	}
	start := time.Now()
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			kind := kinds[i%len(kinds)]
			id := strconv.Itoa(i)
			req := shared.Request{
				RunID: "load-" + id, Argv: []string{"/bin/bash", script}, Dir: skill,
				Env:         []string{"PATH=/usr/bin:/bin", "ID=" + id, "KIND=" + kind},
				Grant:       shared.Grant{Timeout: 60 * time.Second, Trust: shared.TrustExternal},
				SkillDir:    skill,
				OutputLimit: 1 << 20,
				KillGrace:   200 * time.Millisecond,
				Limits:      shared.Limits{OpenFiles: 256, Processes: 64, Memory: 1 << 30},
			}
			if kind == "slow" {
				req.Grant.Timeout = 3 * time.Second
			}
			var buf bytes.Buffer
			res, err := conn.Execute(context.Background(), req, func(b []byte) error { buf.Write(b); return nil })
			out := buf.String()
			switch {
			case err != nil:
				fail("run %s (%s): %v", id, kind, err)
			case kind == "fast" && (out != "run-"+id+"\n" || res.ExitCode != 0):
				fail("run %s (fast): %+v %q", id, res, out)
			case kind == "big" && (len(out) != 300000+len("end-"+id+"\n") || !strings.HasSuffix(out, "end-"+id+"\n") || res.Truncated):
				fail("run %s (big): %+v, %d bytes ending %q", id, res, len(out), out[max(0, len(out)-20):])
			// On a busy machine a slow run may time out before bash starts:
			// its output is then empty, but never another run's.
			case kind == "slow" && (!res.TimedOut || !strings.HasPrefix("start-"+id+"\n", out)):
				fail("run %s (slow): %+v %q", id, res, out)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d runs, %d at a time, in %v", runs, parallel, time.Since(start).Round(time.Millisecond))
	conn.Close()

	if left := loadProcesses(); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	entries, _ := os.ReadDir(tmp)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("left in the plugin's TMPDIR: %v", names)
	}
	// Run cgroups of other tests' plugins come and go meanwhile; what must
	// not grow is the number whose owner is gone (a leak).
	deadline := time.Now().Add(10 * time.Second)
	for leakedCgroups() > leakedBefore && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := leakedCgroups(); n > leakedBefore {
		t.Errorf("%d run cgroups of dead owners before, %d after", leakedBefore, n)
	}
}

// loadProcesses lists live processes named loadtest-*.
func loadProcesses() []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.HasPrefix(cmd, []byte("loadtest-")) {
			out = append(out, fmt.Sprintf("%s %s", e.Name(), bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// leakedCgroups counts the run cgroups (of any skillhost process) whose
// owner, the process named in run-<pid>, is gone.
func leakedCgroups() int {
	n := 0
	for _, base := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory", "/sys/fs/cgroup"} {
		matches, _ := filepath.Glob(filepath.Join(base, "*", runsDirName, "run-*"))
		more, _ := filepath.Glob(filepath.Join(base, runsDirName, "run-*"))
		for _, m := range append(matches, more...) {
			pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), "run-"))
			if err == nil && runner.Gone(pid) {
				n++
			}
		}
	}
	return n
}

const runsDirName = "skillhost-runs"

// loadEnv is added to the plugin's environment (a test of the fallback
// without namespaces sets it).
var loadEnv []string
