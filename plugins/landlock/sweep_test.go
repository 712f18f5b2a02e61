package landlock

import (
	"testing"
	"time"
)

// Runs sweep the run cgroups at most once in sweepEvery, and not in the
// plugin's first sweepEvery (a one-shot plugin's Close sweeps).
func TestRunsSweepCgroupsAtMostEveryInterval(t *testing.T) {
	n := 0
	was := sweep
	sweep = func() { n++ }
	defer func() { sweep = was }()
	e := &Executor{}
	e.swept.Store(time.Now().UnixNano())
	for range 3 {
		e.sweepCgroups()
	}
	if n != 0 {
		t.Fatalf("%d sweeps right after the start, want none", n)
	}
	e.swept.Store(time.Now().Add(-sweepEvery - time.Second).UnixNano())
	for range 3 {
		e.sweepCgroups()
	}
	if n != 1 {
		t.Errorf("%d sweeps once the interval passed, want one", n)
	}
}
