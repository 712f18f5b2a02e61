//go:build unix

package host

import "syscall"

// syscallNonblock opens without blocking on a FIFO or device.
const syscallNonblock = syscall.O_NONBLOCK
