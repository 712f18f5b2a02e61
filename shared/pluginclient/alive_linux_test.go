package pluginclient

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared/procstat"
)

// A process that has exited reads as gone while it is still a zombie no
// one has reaped: a host must not send a call to it.
func TestExitWatchSeesAnUnreapedExit(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var w exitWatch
	defer w.close()
	w.open(pid)
	if !w.alive(pid) {
		t.Fatal("a running process reads as gone")
	}
	if w.state != watchOpen {
		t.Errorf("state %d after open, want a pidfd (kernel without pidfds?)", w.state)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if st, err := procstat.Read(pid); err == nil && st.Gone() {
			break // a zombie now, not reaped
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed process never became a zombie")
		}
	}
	if w.alive(pid) {
		t.Error("an exited, unreaped process reads as alive")
	}
	_ = cmd.Wait()
	if w.alive(pid) {
		t.Error("a reaped process reads as alive")
	}
}
