package shared

import "syscall"

func giveTo(string, *syscall.SysProcAttr) error { return nil }

func closeOnExec(fd int) { syscall.CloseOnExec(syscall.Handle(fd)) }
