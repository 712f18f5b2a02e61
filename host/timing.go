package host

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// TraceEnv is the variable that turns on traces: SKILLHOST_TRACE=timing
// makes a one-shot run (the CLI's run) print, after it ends, one line per
// phase with its wall time and this process's CPU time (user + system),
// to the warnings' writer (stderr). Unset, nothing is measured.
const TraceEnv = "SKILLHOST_TRACE"

// traceTiming reports whether value (SKILLHOST_TRACE's) asks for timing:
// "timing", or a comma-separated list naming it.
func traceTiming(value string) bool {
	for _, v := range strings.Split(value, ",") {
		if strings.TrimSpace(v) == "timing" {
			return true
		}
	}
	return false
}

// initMark is when this package's initialisation ran, set only when
// timing is asked for (a variable lookup otherwise).
var initMark = func() *timeMark {
	if !traceTiming(os.Getenv(TraceEnv)) {
		return nil
	}
	m := now()
	return &m
}()

// timeMark is a point in wall time and this process's CPU time.
type timeMark struct {
	wall  time.Time
	cpu   time.Duration
	cpuOK bool
}

func now() timeMark {
	cpu, ok := processCPU(true)
	return timeMark{wall: time.Now(), cpu: cpu, cpuOK: ok}
}

// timedPhase is one line of the breakdown.
type timedPhase struct {
	name       string
	wall, cpu  time.Duration
	wallOK     bool
	cpuOK      bool
	childrenOK bool // cpu is of waited-for children, not of this process
}

// timing collects the phases of a run: each mark ends the phase that began
// at the previous one. A nil *timing does nothing, so call sites need no
// check.
type timing struct {
	mu     sync.Mutex
	first  timeMark
	last   timeMark
	phases []timedPhase
}

// newTiming starts a collector at this moment, with the phases before it
// as far as they are known: the process's start to this package's
// initialisation (CPU only), and that to now.
func newTiming() *timing {
	t := &timing{}
	t.last = now()
	t.first = t.last
	if initMark != nil {
		// CPU before the first mark is the process's start-up: the
		// runtime and every package initialiser up to this one.
		t.phases = append(t.phases, timedPhase{name: "process start to host init (runtime, package initialisers)", cpu: initMark.cpu, cpuOK: initMark.cpuOK})
		t.phases = append(t.phases, phaseBetween("host init to Open (main, command line)", *initMark, t.last))
		t.first = *initMark
	}
	return t
}

func phaseBetween(name string, from, to timeMark) timedPhase {
	return timedPhase{name: name, wall: to.wall.Sub(from.wall), wallOK: true, cpu: to.cpu - from.cpu, cpuOK: from.cpuOK && to.cpuOK}
}

// mark ends the current phase, naming it.
func (t *timing) mark(name string) {
	if t == nil {
		return
	}
	m := now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.phases = append(t.phases, phaseBetween(name, t.last, m))
	t.last = m
}

// children records the CPU time of the child processes waited for so far
// (plugins, scripts of the in-process runner), as a line of its own.
func (t *timing) children() {
	if t == nil {
		return
	}
	cpu, ok := processCPU(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.phases = append(t.phases, timedPhase{name: "child processes waited for (plugin, supervisor, script)", cpu: cpu, cpuOK: ok, childrenOK: true})
}

// write prints the breakdown, one line per phase, then the total.
func (t *timing) write(w io.Writer) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ms := func(d time.Duration, ok bool) string {
		if !ok {
			return "        -"
		}
		return fmt.Sprintf("%9.3f", float64(d)/float64(time.Millisecond))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "timing: %-62s %9s %9s\n", "phase", "wall ms", "cpu ms")
	var wall, cpu time.Duration
	for _, p := range t.phases {
		if p.wallOK {
			wall += p.wall
		}
		if p.cpuOK && !p.childrenOK {
			cpu += p.cpu
		}
		fmt.Fprintf(&b, "timing: %-62s %s %s\n", p.name, ms(p.wall, p.wallOK), ms(p.cpu, p.cpuOK))
	}
	_, cpuOK := processCPU(true)
	fmt.Fprintf(&b, "timing: %-62s %s %s\n", "total (this process; wall from host init)", ms(wall, true), ms(cpu, cpuOK))
	_, _ = io.WriteString(w, b.String())
}

// traceFunc returns mark as a function for the plugin manager, or nil when
// t is nil (so that nothing is wrapped or measured).
func (t *timing) traceFunc() func(string) {
	if t == nil {
		return nil
	}
	return t.mark
}
