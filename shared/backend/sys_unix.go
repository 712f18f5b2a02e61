//go:build unix

package backend

import "syscall"

func closeOnExec(fd int) { syscall.CloseOnExec(fd) }
