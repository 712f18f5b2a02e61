package serving

import "syscall"

func closeOnExec(fd int) { syscall.CloseOnExec(syscall.Handle(fd)) }

// pollable returns fd: pipes are not polled on Windows.
func pollable(fd int) int { return fd }
