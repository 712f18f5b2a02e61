//go:build unix

package runner

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// SignalName returns the conventional name of sig ("SIGKILL"), or
// "signal N" for a number the platform does not name.
func SignalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return "signal " + strconv.Itoa(int(sig))
}
