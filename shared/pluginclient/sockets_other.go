//go:build !unix

package pluginclient

import "time"

// socketHome is base: go-plugin listens on TCP here.
func socketHome(base string) string { return base }

func sweepSockets(string, time.Duration) {}
