//go:build unix

package safeio

import "syscall"

const (
	nonblock = syscall.O_NONBLOCK
	nofollow = syscall.O_NOFOLLOW
)
