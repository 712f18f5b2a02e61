package host

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTraceTiming(t *testing.T) {
	for v, want := range map[string]bool{"": false, "timing": true, "events, timing": true, "timings": false, "off": false} {
		if got := traceTiming(v); got != want {
			t.Errorf("traceTiming(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestTimingCollector(t *testing.T) {
	var nilTiming *timing
	nilTiming.mark("nothing") // a nil collector does nothing
	nilTiming.children()
	nilTiming.write(nil)
	if nilTiming.traceFunc() != nil {
		t.Error("a nil collector gave a trace function: the plugin start would be wrapped for nothing")
	}

	tm := newTiming()
	time.Sleep(2 * time.Millisecond)
	tm.mark("sleep")
	deadline := time.Now().Add(3 * time.Millisecond)
	for time.Now().Before(deadline) { // spin: CPU time
	}
	tm.traceFunc()("spin")
	tm.children()
	var b bytes.Buffer
	tm.write(&b)
	out := b.String()
	phases := map[string]timedPhase{}
	for _, p := range tm.phases {
		phases[p.name] = p
	}
	// The CPU is the whole process's: the race runtime, the collector and
	// goroutines other tests left may use some while this one sleeps, on
	// every core. Far more than that is a unit gone wrong.
	if p := phases["sleep"]; !p.wallOK || p.wall < 2*time.Millisecond || (p.cpuOK && p.cpu > 2*p.wall+10*time.Millisecond) {
		t.Errorf("sleep phase = %+v", p)
	}
	if p := phases["spin"]; !p.wallOK || p.wall < 3*time.Millisecond {
		t.Errorf("spin phase = %+v", p)
	} else if p.cpuOK && p.cpu < time.Millisecond {
		t.Errorf("spin phase counted %v of CPU in %v of spinning", p.cpu, p.wall)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(tm.phases)+2 { // a header, the phases, the total
		t.Fatalf("%d lines for %d phases:\n%s", len(lines), len(tm.phases), out)
	}
	for _, want := range []string{"timing: phase", "timing: sleep ", "timing: spin ", "timing: child processes", "timing: total"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestRunTiming runs a tool with the in-process strategy and the timing
// collector on, as SKILLHOST_TRACE=timing does for the CLI's one-shot run,
// and checks that Close prints every phase of the run.
func TestRunTiming(t *testing.T) {
	t.Setenv(TraceEnv, "timing")
	root := t.TempDir()
	dir := filepath.Join(root, "echo")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: echo\ndescription: Says hi\n---\nSay hi.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripts", "hi.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	var warnings bytes.Buffer
	// Not OneShot (a process-wide setting for the in-process runner):
	// Open must then leave timing off even with the variable set, and the
	// collector is put in by hand.
	h, err := Open(Options{SkillRoots: []string{root}, Warnings: &warnings})
	if err != nil {
		t.Fatal(err)
	}
	if h.timing != nil {
		t.Fatal("timing is on for a host that is not one-shot")
	}
	h.timing = newTiming()
	res, err := h.Run(context.Background(), RunRequest{Skill: "echo", Tool: "hi", Strategy: "none"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != "hi\n" {
		t.Fatalf("output %q", res.Output)
	}
	h.Close()
	out := warnings.String()
	for _, phase := range []string{"catalog lookup", "grant", "request", "execute", "settle", "output", "child processes", "total"} {
		if !strings.Contains(out, "timing: "+phase) {
			t.Errorf("no %q line in\n%s", phase, out)
		}
	}
}
