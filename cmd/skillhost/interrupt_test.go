//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testskill"
)

// Ctrl-C during a plain run keeps the output so far, says the run was
// interrupted, and exits 130 (issue 29, point 7); the script's process is
// gone afterwards.
func TestRunInterruptedKeepsOutput(t *testing.T) {
	bin, plugins := skillhostBinary(t)
	root := t.TempDir()
	pidFile := root + "/pid"
	testskill.Add(t, root, "slow", testskill.Skill{Name: "slow", Description: "test skill slow", Body: "# slow\n", Scripts: map[string]string{"wait.sh": "#!/bin/sh\necho $$ > " + pidFile + "\necho started\nexec sleep 300\n"}})
	for _, strategy := range []string{"none", "null"} {
		cmd := exec.Command(bin, "--skills", root, "run", "slow", "wait", "--strategy", strategy)
		cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+plugins)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The output reaches the pipe only when the run ends; the pid
		// file says the script is running.
		deadline := time.Now().Add(60 * time.Second)
		for {
			if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%s: the script never started", strategy)
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(os.Interrupt)
		out, _ := io.ReadAll(bufio.NewReader(stdout))
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("%s: exit %v, want 130", strategy, err)
		}
		if !strings.Contains(string(out), "started") {
			t.Errorf("%s: the output so far was dropped: %q", strategy, out)
		}
		if !strings.Contains(stderr.String(), "interrupted") || strings.Contains(stderr.String(), "context canceled") {
			t.Errorf("%s: stderr %q", strategy, stderr.String())
		}
		data, _ := os.ReadFile(pidFile)
		var pid int
		if _, err := fmt.Sscan(strings.TrimSpace(string(data)), &pid); err == nil && syscall.Kill(pid, 0) == nil {
			t.Errorf("%s: the script (pid %d) outlived the interrupted run", strategy, pid)
		}
		os.Remove(pidFile)
	}
}

// Ctrl-C during `run --json` prints the report so far, with the output
// before the interrupt and "interrupted": true, and exits 130 (issue 35);
// the run leaves no socket directory in the temporary directory.
func TestRunJSONInterrupted(t *testing.T) {
	bin, plugins := skillhostBinary(t)
	root := t.TempDir()
	tmp, err := os.MkdirTemp("", "ji-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	pidFile := root + "/pid"
	testskill.Add(t, root, "slow", testskill.Skill{Name: "slow", Description: "test skill slow", Body: "# slow\n", Scripts: map[string]string{"wait.sh": "#!/bin/sh\necho started\necho $$ > " + pidFile + "\nexec sleep 300\n"}})
	cmd := exec.Command(bin, "--json", "--skills", root, "run", "slow", "wait", "--strategy", "null")
	cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+plugins, "TMPDIR="+tmp)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the script never started")
		}
	}
	time.Sleep(200 * time.Millisecond) // "started" reaches the host
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want 130", err)
	}
	var rep struct {
		Skill, Tool, Output, Strategy string
		Interrupted                   bool
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("stdout is not a report: %v\n%q\nstderr: %q", err, stdout.String(), stderr.String())
	}
	if !rep.Interrupted || rep.Output != "started\n" || rep.Skill != "slow" || rep.Tool != "wait" || rep.Strategy != "null" {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %q", stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "plugin-dir*")); len(left) > 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}
