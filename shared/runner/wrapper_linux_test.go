package runner

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// dyingWrapper plays bubblewrap with --die-with-parent: it runs its
// arguments as a child and, on SIGTERM, kills that child at once and dies.
var dyingWrapper = []string{"/bin/sh", "-c", `"$@" & child=$!; trap 'echo wrapper got TERM; kill -KILL $child; exit 143' TERM; wait $child; st=$?; wait $child; exit $st`, "wrapper"}

func TestExtraFilesReachTheCommand(t *testing.T) {
	modes(t, func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() { w.WriteString("from fd 3"); w.Close() }()
		res, out := run(t, Spec{Argv: bash(`cat <&3`), ExtraFiles: []*os.File{r}})
		if res.ExitCode != 0 || out != "from fd 3" {
			t.Errorf("exit %d, output %q; want 0, %q", res.ExitCode, out, "from fd 3")
		}
	})
}

// The status init reports the command's own end (a signal here) where the
// wrapper reports only an exit code.
func TestStatusChannelReportsTheCommandsSignal(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	modes(t, func(t *testing.T) {
		spec := Spec{StatusChannel: true}
		spec.Argv = append(append([]string{}, dyingWrapper...), StatusInit{Path: self, FD: StatusFD(spec)}.Argv(absBash(`kill -TERM $$`))...)
		var used *Usage
		spec.Used = func(u Usage) { used = &u }
		res, out := run(t, spec)
		if res.ExitCode != -1 || res.Signal != "SIGTERM" {
			t.Errorf("got exit %d signal %q, want -1 SIGTERM (output %q)", res.ExitCode, res.Signal, out)
		}
		if used == nil {
			t.Error("no resource usage reported")
		}
	})
}

func TestStatusChannelAbsentKeepsTheWrappersStatus(t *testing.T) {
	spec := Spec{StatusChannel: true, Argv: bash(`exit 3`)}
	res, _ := run(t, spec)
	if res.ExitCode != 3 {
		t.Errorf("got exit %d, want 3", res.ExitCode)
	}
}

// A supervised command's resource usage is what its supervisor reaped.
func TestSupervisedRunReportsUsage(t *testing.T) {
	if !Supervised() {
		t.Skip("needs supervision")
	}
	// About 0.2 s of CPU time in the command itself.
	var used *Usage
	run(t, Spec{Argv: bash(`i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done`), Used: func(u Usage) { used = &u }})
	if used == nil || used.UserTime+used.SystemTime <= 0 || used.MaxRSS <= 0 {
		t.Errorf("usage = %+v, want CPU time and a resident set", used)
	}
}

// With TermBelow the command behind a wrapper that dies of SIGTERM still
// gets its grace: it sees SIGTERM and ends on its own terms. The run is
// stopped once the command said it is ready, so a slow start cannot put
// the stop before the command's trap.
func TestTermBelowSparesTheWrapper(t *testing.T) {
	if !Supervised() {
		t.Skip("needs supervision")
	}
	self, _ := os.Executable()
	for _, below := range []int{0, 2} { // 2: the wrapper and the init it runs
		spec := Spec{StatusChannel: true, KillGrace: time.Minute, TermBelow: below}
		spec.Argv = append(append([]string{}, dyingWrapper...),
			StatusInit{Path: self, FD: StatusFD(spec)}.Argv(absBash(`trap 'echo got TERM; exit 7' TERM; echo ready; sleep 30 & wait`))...)
		res, out := runUntil(t, spec, "ready\n")
		if res.Duration > 30*time.Second {
			t.Errorf("TermBelow %d: ended after %v, want well within the grace", below, res.Duration)
		}
		if spared := !strings.Contains(out, "wrapper got TERM"); spared != (below > 0) {
			t.Errorf("TermBelow %d: output %q; want the wrapper spared: %v", below, out, below > 0)
		}
		if below > 0 && (res.ExitCode != 7 || res.Signal != "" || !strings.Contains(out, "got TERM")) {
			t.Errorf("TermBelow %d: exit %d %s, output %q; want the command's own exit 7 after its SIGTERM", below, res.ExitCode, res.Signal, out)
		}
	}
}

// A deadline that falls while the spared wrapper is still starting the
// command reaches the command once it is there, instead of letting it run
// until the grace is over.
func TestTermBelowReachesACommandStartedLate(t *testing.T) {
	if !Supervised() {
		t.Skip("needs supervision")
	}
	// The wrapper waits half a second without a process of its own (one
	// would be below it, and signalled), then runs the command as its
	// child (not by exec: the exit after it keeps bash from that) and
	// exits with its status.
	slowWrapper := []string{"/bin/bash", "-c", `end=$((${EPOCHREALTIME/./} + 500000)); while ((${EPOCHREALTIME/./} < end)); do :; done; "$@"; exit $?`, "wrapper"}
	spec := Spec{Timeout: 100 * time.Millisecond, KillGrace: time.Minute, TermBelow: 1}
	spec.Argv = append(slowWrapper, absBash(`echo started; sleep 120`)...)
	res, out := run(t, spec)
	if !res.TimedOut || res.Duration > 30*time.Second || res.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("timed out %v after %v, exit %d %s, output %q; want the wrapper's 143 for a command ended by SIGTERM, soon after it started", res.TimedOut, res.Duration, res.ExitCode, res.Signal, out)
	}
}

func TestLimitsAreAppliedOrRefused(t *testing.T) {
	if !Supervised() {
		t.Skip("needs supervision")
	}
	res, out := run(t, Spec{Argv: bash(`ulimit -n; ulimit -f`), Limits: shared.Limits{OpenFiles: 17, FileSize: 4096}})
	// bash reports the file size limit in blocks of 1024 bytes.
	if res.ExitCode != 0 || out != "17\n4\n" {
		t.Errorf("exit %d, output %q; want 17 and 4", res.ExitCode, out)
	}
	if os.Geteuid() == 0 {
		_, err := Run(context.Background(), Spec{Argv: bash(`true`), Limits: shared.Limits{Processes: 5}}, nil)
		if !errors.Is(err, ErrLimits) || !strings.Contains(err.Error(), "processes") {
			t.Errorf("a processes limit as root: err %v, want one naming processes", err)
		}
	}
}

// absBash is bash by absolute path, for an argv run with an empty
// environment.
func absBash(script string) []string { return []string{"/bin/bash", "-c", script} }
