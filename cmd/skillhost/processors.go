package main

import (
	"os"
	"runtime"
)

// oneProcessor runs this process's Go code on one processor, unless
// GOMAXPROCS is set: for the commands that spend their time waiting on a
// plugin, a script and pipes (run, and mcp on stdio, which serves one
// client). With a processor idle, Go's scheduler wakes a thread at each
// event only to find nothing else to run, and its monitor polls a processor
// held in a system call every 20 µs (docs/performance.md). A run whose
// skill is not in a directory of its name falls back to a full load of the
// catalog, which then parses on the one processor too.
func oneProcessor() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
}
