//go:build !unix

package host

import "time"

// processCPU is not measured here: timing lines show wall time only.
func processCPU(bool) (time.Duration, bool) { return 0, false }
