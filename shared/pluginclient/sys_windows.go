package pluginclient

import "syscall"

func giveTo(string, *syscall.SysProcAttr) error { return nil }
