package procs

import (
	"os"
	"runtime"
	"testing"
)

func reset(t *testing.T) {
	t.Helper()
	saved := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		runtime.GOMAXPROCS(saved)
		waiting, full, busy = false, 0, 0
	})
}

// Wait leaves a GOMAXPROCS the environment gives alone.
func TestWaitLeavesAGivenGOMAXPROCS(t *testing.T) {
	reset(t)
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3)
	Wait()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("with GOMAXPROCS=3 in the environment, GOMAXPROCS became %d", n)
	}
	if n, done := Busy(); n != 3 {
		t.Errorf("Busy gives %d processors, want 3", n)
	} else {
		done()
	}
}

// A GOMAXPROCS the runtime ignores is no setting: Wait still goes to one
// processor.
func TestWaitIgnoresAnInvalidGOMAXPROCS(t *testing.T) {
	for _, v := range []string{"", "0", "-1", "four"} {
		t.Run(v, func(t *testing.T) {
			reset(t)
			t.Setenv("GOMAXPROCS", v)
			runtime.GOMAXPROCS(2)
			Wait()
			if n := runtime.GOMAXPROCS(0); n != 1 {
				t.Errorf("with GOMAXPROCS=%q, GOMAXPROCS is %d after Wait, want 1", v, n)
			}
		})
	}
}

// After Wait, one processor; during bursts, all of them again, until the
// last one is done (each done counts once).
func TestBusyGivesTheProcessorsBack(t *testing.T) {
	reset(t)
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	runtime.GOMAXPROCS(4)
	Wait()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("after Wait, GOMAXPROCS is %d, want 1", n)
	}
	n1, done1 := Busy()
	n2, done2 := Busy()
	if n1 != 4 || n2 != 4 || runtime.GOMAXPROCS(0) != 4 {
		t.Fatalf("Busy gave %d and %d, GOMAXPROCS %d; want 4", n1, n2, runtime.GOMAXPROCS(0))
	}
	done1()
	done1()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Errorf("with one burst still running, GOMAXPROCS is %d, want 4", n)
	}
	done2()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("after the last burst, GOMAXPROCS is %d, want 1", n)
	}
}

// A burst running when Wait is called keeps every processor until it is
// done; then one.
func TestWaitDuringABurst(t *testing.T) {
	reset(t)
	os.Unsetenv("GOMAXPROCS")
	runtime.GOMAXPROCS(4)
	n, done := Busy()
	if n != 4 {
		t.Fatalf("Busy before Wait gives %d, want 4", n)
	}
	Wait()
	if g := runtime.GOMAXPROCS(0); g != 4 {
		t.Errorf("Wait during a burst: GOMAXPROCS %d, want 4 until it is done", g)
	}
	done()
	if g := runtime.GOMAXPROCS(0); g != 1 {
		t.Errorf("after the burst, GOMAXPROCS is %d, want 1", g)
	}
}

// Workers asks for no processors for what one worker does.
func TestWorkers(t *testing.T) {
	reset(t)
	os.Unsetenv("GOMAXPROCS")
	runtime.GOMAXPROCS(4)
	Wait()
	if n, done := Workers(1); n != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("Workers(1) = %d with GOMAXPROCS %d; want 1 and 1", n, runtime.GOMAXPROCS(0))
	} else {
		done()
	}
	n, done := Workers(16)
	if n != 4 || runtime.GOMAXPROCS(0) != 4 {
		t.Errorf("Workers(16) = %d with GOMAXPROCS %d; want 4 and 4", n, runtime.GOMAXPROCS(0))
	}
	done()
}
