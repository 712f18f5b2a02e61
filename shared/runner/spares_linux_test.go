package runner

import (
	"context"
	"testing"
	"time"
)

// warmReady reports whether a spare supervisor for confine is waiting.
func warmReady(confine string) bool {
	std.spares.Lock()
	defer std.spares.Unlock()
	return std.spares.ready[confine] != nil
}

// warmBusy reports whether a spare is being started.
func warmBusy(confine string) bool {
	std.spares.Lock()
	defer std.spares.Unlock()
	return std.spares.busy[confine]
}

// dropWarm stops a waiting spare, if any.
func dropWarm(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for warmBusy("") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p := std.spares.take(""); p != nil {
		p.cleanup()
		_, _ = p.proc.Wait()
		p.out.Close()
		p.status.Close()
	}
}

// TestKeepSparesOff checks the one-shot knob: with spares off, a run leaves
// no supervisor started (or starting) for a next command; with them on (the
// control), it does.
func TestKeepSparesOff(t *testing.T) {
	if !Supervised() {
		t.Skip("no supervision on this platform")
	}
	defer KeepSpares(true)
	for _, keep := range []bool{false, true} {
		dropWarm(t)
		KeepSpares(keep)
		if res, out := run(t, Spec{Argv: []string{"/bin/echo", "hi"}, Timeout: 30 * time.Second}); res.ExitCode != 0 || out != "hi\n" {
			t.Fatalf("keep=%v: run = %+v, %q", keep, res, out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for keep && !warmReady("") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := warmReady("") || warmBusy(""); got != keep {
			t.Errorf("keep=%v: a spare supervisor exists = %v", keep, got)
		}
	}
	dropWarm(t)
}

// Two runners keep their own settings: one without spares leaves none
// while another, in the same program, keeps its own.
func TestRunnersKeepTheirOwnSpares(t *testing.T) {
	if !Supervised() {
		t.Skip("no supervision on this platform")
	}
	keeping, oneShot := New(), New(WithoutSpares())
	defer keeping.Close()
	defer oneShot.Close()
	for _, r := range []*Runner{keeping, oneShot} {
		res, err := r.Run(context.Background(), Spec{Argv: []string{"/bin/echo", "hi"}, Timeout: 30 * time.Second}, nil)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("run: %+v, %v", res, err)
		}
	}
	ready := func(r *Runner) bool {
		r.spares.Lock()
		defer r.spares.Unlock()
		return r.spares.ready[""] != nil || r.spares.busy[""]
	}
	waiting := func(r *Runner) bool {
		r.spares.Lock()
		defer r.spares.Unlock()
		return r.spares.ready[""] != nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for !waiting(keeping) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !waiting(keeping) || ready(oneShot) {
		t.Errorf("spares: keeping runner %v (want true), one-shot runner %v (want false)", ready(keeping), ready(oneShot))
	}
	keeping.Close()
	if ready(keeping) {
		t.Error("Close left a spare")
	}
}
