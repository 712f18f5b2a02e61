package serving

import "syscall"

// CloseOnExec keeps fd from every process this one starts.
func CloseOnExec(fd int) { syscall.CloseOnExec(syscall.Handle(fd)) }

// pollable returns fd: pipes are not polled on Windows.
func pollable(fd int) int { return fd }
