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
	// Run calls from this thread: its slack is the one to keep.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Skip("no timer slack here:", err)
	}
	want := strconv.Itoa(own) + "\n"
	slack := bash(`cat /proc/self/timerslack_ns`)
	for _, tt := range []struct {
		name string
		spec Spec
		env  string // EnvNoNamespaces
	}{
		{name: "plain", spec: Spec{Argv: slack}},
		{name: "limits step", spec: Spec{Argv: slack, Limits: shared.Limits{OpenFiles: 64}}},
		{name: "confine helper", spec: Spec{Argv: slack, Confine: "test-nofile", ConfinePayload: []byte("64")}},
		{name: "supervisor as init", spec: Spec{Argv: slack, Confine: "test-iso"}},
		{name: "helper without namespaces", spec: Spec{Argv: slack, Confine: "test-iso-fallback"}, env: "1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv(EnvNoNamespaces, tt.env)
			}
			res, out := run(t, tt.spec)
			if res.ExitCode != 0 || out != want {
				t.Errorf("exit %d, slack %q; want the caller's %q", res.ExitCode, out, want)
			}
		})
	}
}

// What withSupervisorSlack starts has the coarser slack, and the slack to
// give back in its environment; the caller's thread keeps its own.
func TestSupervisorStartsWithCoarseTimerSlack(t *testing.T) {
	// withSupervisorSlack locks again (nested) and must leave this
	// thread's slack as it found it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
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
	if now, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); now != own {
		t.Errorf("this thread's slack is %d after the start, want %d", now, own)
	}
}
