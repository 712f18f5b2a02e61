// Package procs keeps a process that spends its time waiting (on a plugin,
// a script, pipes) on one processor, and gives its bursts of parallel work
// (parsing a catalog, measuring the matcher) every processor back while they
// run.
//
// With a processor idle, Go's scheduler wakes a thread at each event (a
// pipe ready, a child gone) only to find nothing else to run, and its
// monitor polls a processor held in a system call every 20 µs while another
// is idle: a fifth of a millisecond and more of CPU per call here
// (docs/performance.md).
package procs

import (
	"os"
	"runtime"
	"sync"

	"github.com/skillhost/skillhost/shared"
)

var (
	mu      sync.Mutex
	waiting bool // Wait took effect
	full    int  // GOMAXPROCS before Wait
	busy    int  // bursts running
)

// Wait runs the process's Go code on one processor from now on, unless
// GOMAXPROCS in its environment is a number of processors the runtime took
// (then that stands; a value the runtime ignored is ignored here too). Bursts
// running when it is called keep every processor until the last is done.
func Wait() {
	mu.Lock()
	defer mu.Unlock()
	if shared.ProcessorsGiven(os.Getenv("GOMAXPROCS")) || waiting {
		return
	}
	waiting = true
	full = runtime.GOMAXPROCS(0)
	if busy == 0 {
		runtime.GOMAXPROCS(1)
	}
}

// Busy gives a burst of parallel work the processors the process had
// before Wait, until done is called, and returns how many that is: what to
// size a pool of workers by. Bursts may overlap; after Wait, the last done
// goes back to one processor.
func Busy() (n int, done func()) {
	mu.Lock()
	defer mu.Unlock()
	busy++
	n = runtime.GOMAXPROCS(0)
	if waiting {
		n = full
		if busy == 1 {
			runtime.GOMAXPROCS(full)
		}
	}
	var once sync.Once
	return n, func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			busy--
			if busy == 0 && waiting {
				runtime.GOMAXPROCS(1)
			}
		})
	}
}

// Workers is how many workers to start for work that most could share:
// the processors Busy gives, at most most, and done; or 1 and a done that
// does nothing when most is 1 or less (changing GOMAXPROCS stops the
// world).
func Workers(most int) (n int, done func()) {
	if most <= 1 {
		return 1, func() {}
	}
	n, done = Busy()
	return min(n, most), done
}
