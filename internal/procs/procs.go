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
)

var (
	mu      sync.Mutex
	waiting bool // Wait took effect
	full    int  // GOMAXPROCS before Wait
	busy    int  // bursts running
)

// Wait runs the process's Go code on one processor from now on, unless
// GOMAXPROCS is set in its environment (then the setting stands).
func Wait() {
	mu.Lock()
	defer mu.Unlock()
	if _, set := os.LookupEnv("GOMAXPROCS"); set || waiting {
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
// size a pool of workers by. Bursts may overlap; the last done goes back to
// one processor. Without Wait it changes nothing.
func Busy() (n int, done func()) {
	mu.Lock()
	defer mu.Unlock()
	if !waiting {
		return runtime.GOMAXPROCS(0), func() {}
	}
	busy++
	if busy == 1 {
		runtime.GOMAXPROCS(full)
	}
	var once sync.Once
	return full, func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			busy--
			if busy == 0 {
				runtime.GOMAXPROCS(1)
			}
		})
	}
}
