package runner

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
)

// The command starts with the timer slack of the thread that called Run,
// whichever way it is started, although its supervisor was started with a
// coarser one.
func TestCommandKeepsTheCallersTimerSlack(t *testing.T) {
	if !Supervised() {
		t.Skip("needs supervision")
	}
	own, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Skip("no timer slack here:", err)
	}
	want := strconv.Itoa(own) + "\n"
	for _, spec := range []Spec{
		{Argv: bash(`cat /proc/self/timerslack_ns`)},
		{Argv: bash(`cat /proc/self/timerslack_ns`), Confine: "test-nofile", ConfinePayload: []byte("64")},
		{Argv: bash(`cat /proc/self/timerslack_ns`), Confine: "test-iso"},
		{Argv: bash(`cat /proc/self/timerslack_ns`), Limits: shared.Limits{OpenFiles: 64}},
	} {
		res, out := run(t, spec)
		if res.ExitCode != 0 || out != want {
			t.Errorf("confine %q, limits %+v: exit %d, slack %q; want the caller's %q", spec.Confine, spec.Limits, res.ExitCode, out, want)
		}
	}
}

// What withSupervisorSlack starts has the coarser slack, and the slack to
// give back in its environment; the caller's thread keeps its own.
func TestSupervisorStartsWithCoarseTimerSlack(t *testing.T) {
	own, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || own >= supervisorSlack {
		t.Skipf("timer slack %d, %v: nothing to coarsen", own, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var proc *os.Process
	err = withSupervisorSlack(func(env string) (err error) {
		proc, err = os.StartProcess("/bin/sh", []string{"sh", "-c", `cat /proc/self/timerslack_ns; echo "$` + envTimerSlack + `"`},
			&os.ProcAttr{Env: []string{env}, Files: []*os.File{nil, w, os.Stderr}})
		return err
	})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Wait()
	out, _ := io.ReadAll(r)
	if want := fmt.Sprintf("%d\n%d\n", supervisorSlack, own); string(out) != want {
		t.Errorf("the started process printed %q, want %q", out, want)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if now, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); now != own {
		t.Errorf("this thread's slack is %d after the start, want %d", now, own)
	}
}
