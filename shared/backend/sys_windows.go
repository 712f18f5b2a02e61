package backend

import "syscall"

func closeOnExec(fd int) { syscall.CloseOnExec(syscall.Handle(fd)) }

// nonblocking does nothing here: pipes are not polled on Windows.
func nonblocking(int) {}
