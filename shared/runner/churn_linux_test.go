package runner

import (
	"os/exec"
	"syscall"
	"testing"
)

// A tree whose processes come and go all the time must not keep a walk of
// /proc from finishing: a process reaped between the open and the read of
// its stat file is gone, not an error.
func TestDescendantsWhileTheTreeChurns(t *testing.T) {
	cmd := exec.Command("bash", "-c", "while :; do for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	for i := range 2000 {
		if _, err := descendants(cmd.Process.Pid); err != nil {
			t.Fatalf("walk %d: %v", i, err)
		}
	}
}
