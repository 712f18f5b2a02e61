package runner

import (
	"testing"
	"time"
)

// warmReady reports whether a spare supervisor for confine is waiting.
func warmReady(confine string) bool {
	warm.Lock()
	defer warm.Unlock()
	return warm.ready[confine] != nil
}

// warmBusy reports whether a spare is being started.
func warmBusy(confine string) bool {
	warm.Lock()
	defer warm.Unlock()
	return warm.busy[confine]
}

// dropWarm stops a waiting spare, if any.
func dropWarm(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for warmBusy("") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p := takeWarm(""); p != nil {
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
