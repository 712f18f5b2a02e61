package confiner

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Filter is an assembled seccomp program.
type Filter []unix.SockFilter

// loadSeccomp installs f on every thread of the calling process.
func loadSeccomp(f Filter) error {
	if len(f) == 0 {
		return errors.New("empty filter")
	}
	fprog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("seccomp(SET_MODE_FILTER): %w", errno)
	}
	return nil
}
