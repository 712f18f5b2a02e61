package backend

import "github.com/skillhost/skillhost/shared/backend/kit"

// WithOneProcessor runs the plugin's Go code on one processor
// (runtime.GOMAXPROCS(1)) from the start of Serve, unless GOMAXPROCS in
// its environment is a number of processors the runtime takes (the host
// passes its own on); one it ignores is ignored here too.
//
// It suits a backend whose calls wait on child processes and pipes, as the
// runner's do. With a processor idle, Go's scheduler wakes a thread at each
// event (a pipe ready, a child gone) that finds nothing else to run and
// sleeps again, and its monitor polls a processor held in a system call
// every 20 µs while another is idle; on one processor the first never
// happens and the second stops at the first poll. That was 0.3 ms of CPU of
// each warm call here, and output flowed faster (docs/performance.md). A
// backend that computes in its own process (an interpreter, a virtual
// machine) should not use it: its concurrent calls would share the one
// processor. (The Landlock plugin's egress proxy, which terminates TLS, is
// the one computing part of the bundled plugins, and it shares it too.)
func WithOneProcessor() Option { return func(c *serveConfig) { c.oneProcessor = true } }

// useOneProcessor applies WithOneProcessor; it reports whether it did.
func useOneProcessor() bool { return kit.UseOneProcessor() }
