//go:build !linux

package sandbox

import "time"

// cpuTime is not measured outside Linux; benchmarks report 0.
func cpuTime(...int) time.Duration { return 0 }
