//go:build unix

package skilltar

import "syscall"

const openFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
