//go:build unix

package runner

import (
	"os"
	"syscall"
)

// maxBuffered bounds readBuffered: a pipe holds at most 1 MiB by default,
// and a writer that outlived the run must not keep it reading forever.
const maxBuffered = 1 << 20

// readBuffered passes on what the pipe f holds right now, without waiting
// for more. f must be non-blocking, as os.Pipe files are.
func readBuffered(f *os.File, buf []byte, write func([]byte)) {
	sc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = sc.Control(func(fd uintptr) {
		for total := 0; total < maxBuffered; {
			n, err := syscall.Read(int(fd), buf)
			if err == syscall.EINTR {
				continue
			}
			if n <= 0 || err != nil {
				return // empty (EAGAIN) or at its end
			}
			write(buf[:n])
			total += n
		}
	})
}
