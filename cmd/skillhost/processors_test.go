package main

import (
	"os"
	"runtime"
	"testing"
)

func TestOneProcessorLeavesAGivenGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3)
	oneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("with GOMAXPROCS=3 in the environment, GOMAXPROCS became %d", n)
	}
	os.Unsetenv("GOMAXPROCS")
	oneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("without GOMAXPROCS in the environment, GOMAXPROCS is %d, want 1", n)
	}
}
