package confiner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/frame"
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

// appendFilter appends f as one byte field, eight bytes an instruction.
func appendFilter(b []byte, f Filter) []byte {
	raw := make([]byte, 0, 8*len(f))
	for _, in := range f {
		raw = binary.LittleEndian.AppendUint16(raw, in.Code)
		raw = append(raw, in.Jt, in.Jf)
		raw = binary.LittleEndian.AppendUint32(raw, in.K)
	}
	return frame.AppendBytes(b, raw)
}

// readFilter reads an appendFilter.
func readFilter(d *frame.Decoder) (Filter, error) {
	raw := d.ReadBytes()
	if len(raw)%8 != 0 {
		return nil, fmt.Errorf("a seccomp program of %d bytes, not whole instructions", len(raw))
	}
	if len(raw) == 0 {
		return nil, nil
	}
	f := make(Filter, len(raw)/8)
	for i := range f {
		in := raw[8*i:]
		f[i] = unix.SockFilter{Code: binary.LittleEndian.Uint16(in), Jt: in[2], Jf: in[3], K: binary.LittleEndian.Uint32(in[4:])}
	}
	return f, nil
}
