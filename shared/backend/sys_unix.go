//go:build unix

package backend

import "syscall"

func closeOnExec(fd int) { syscall.CloseOnExec(fd) }

// nonblocking makes os.NewFile hand fd to the poller.
func nonblocking(fd int) { _ = syscall.SetNonblock(fd, true) }
