package kit

import (
	"os"
	"runtime"

	"github.com/skillhost/skillhost/shared"
)

// UseOneProcessor runs the plugin's Go code on one processor
// (runtime.GOMAXPROCS(1)), unless GOMAXPROCS in its environment is a
// number of processors the runtime takes (the host passes its own on); one
// it ignores is ignored here too. It reports whether it did. See
// backend.WithOneProcessor for which backends it suits.
func UseOneProcessor() bool {
	if shared.ProcessorsGiven(os.Getenv("GOMAXPROCS")) {
		return false
	}
	runtime.GOMAXPROCS(1)
	return true
}
