package backend

import (
	"os"
	"runtime"
	"testing"
)

// WithOneProcessor leaves a GOMAXPROCS the environment gives alone, and
// otherwise runs the plugin on one processor.
func TestWithOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var cfg serveConfig
	WithOneProcessor()(&cfg)
	if !cfg.oneProcessor {
		t.Fatal("WithOneProcessor does not ask Serve for one processor")
	}
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3)
	if useOneProcessor() || runtime.GOMAXPROCS(0) != 3 {
		t.Errorf("with GOMAXPROCS=3 in the environment, GOMAXPROCS became %d", runtime.GOMAXPROCS(0))
	}
	// Values the runtime ignores (it started with every processor) are
	// no setting.
	for _, v := range []string{"", "0", "-2", "all", "2x"} {
		t.Setenv("GOMAXPROCS", v)
		runtime.GOMAXPROCS(3)
		if !useOneProcessor() || runtime.GOMAXPROCS(0) != 1 {
			t.Errorf("with GOMAXPROCS=%q in the environment, GOMAXPROCS is %d, want 1", v, runtime.GOMAXPROCS(0))
		}
	}
	os.Unsetenv("GOMAXPROCS")
	runtime.GOMAXPROCS(3)
	if !useOneProcessor() || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("without GOMAXPROCS in the environment, GOMAXPROCS is %d, want 1", runtime.GOMAXPROCS(0))
	}
}
