package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
)

// minSupervisorFD is the lowest descriptor number the runner keeps its
// supervisor binary at, out of the way of the low numbers a child's
// descriptors are arranged in. It is not a guarantee: see start.
const minSupervisorFD = 100

// openSupervisor keeps a close-on-exec copy of fd, checked to be a regular
// file someone may execute, and what the file was then (see changed).
func openSupervisor(fd int) (*supervisorExe, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("supervisor binary: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
		return nil, fmt.Errorf("supervisor binary: not a regular executable file")
	}
	own, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, minSupervisorFD)
	if err != nil {
		return nil, fmt.Errorf("supervisor binary: %w", err)
	}
	name := "skillhost-supervisor"
	if target, err := os.Readlink(fdPath(fd)); err == nil && strings.HasPrefix(target, "/") {
		name = filepath.Base(strings.TrimSuffix(target, " (deleted)"))
	}
	return &supervisorExe{fd: own, path: fdPath(own), stat: st, name: name}, nil
}

func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// changed reports whether the file was written to since it was opened
// (its size, modification or change time moved): what was checked then
// (a pin, say) no longer holds, so it is not started.
func (e *supervisorExe) changed() bool {
	var st unix.Stat_t
	if unix.Fstat(e.fd, &st) != nil {
		return true
	}
	return st.Size != e.stat.Size || st.Mtim != e.stat.Mtim || st.Ctim != e.stat.Ctim
}

// start starts the binary as startSupervisor does with attr. While the
// child's descriptors are arranged, Go's fork moves descriptors to numbers
// above the highest in attr.Files, one by one; should the runner's copy be
// within their reach, a fresh copy above it is started instead.
func (e *supervisorExe) start(confine string, isolate bool, attr *os.ProcAttr) (*os.Process, bool, string, error) {
	path, reach := e.path, 3
	for _, f := range attr.Files {
		if f != nil {
			reach = max(reach, int(f.Fd()))
		}
	}
	reach += len(attr.Files) + 2
	if e.fd <= reach {
		fd, err := unix.FcntlInt(uintptr(e.fd), unix.F_DUPFD_CLOEXEC, reach+1)
		if err != nil {
			return nil, false, "", err
		}
		defer unix.Close(fd)
		path = fdPath(fd)
	}
	return startSupervisor(path, e.name, confine, isolate, attr)
}

// lasting reports whether a failure to start the binary says it cannot be
// started at all (so the runner stops trying), not that the machine is
// short of processes or descriptors for the moment.
func lasting(err error) bool {
	for _, errno := range []syscall.Errno{unix.ENOEXEC, unix.EACCES, unix.ENOENT, unix.EPERM, unix.ELOOP, unix.ENOTDIR, unix.EINVAL} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// inheritedSupervisor is the supervisor binary this process's host handed
// it (shared.EnvSupervisorFD), or nil. The variable is removed from the
// environment, and the inherited descriptor closed once a copy is kept (a
// descriptor that is not an executable file is left alone).
var inheritedSupervisor = sync.OnceValue(func() *supervisorExe {
	v, ok := os.LookupEnv(shared.EnvSupervisorFD)
	if !ok {
		return nil
	}
	os.Unsetenv(shared.EnvSupervisorFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil
	}
	e, err := openSupervisor(fd)
	if err != nil {
		return nil
	}
	unix.Close(fd)
	return e
})

// supervisor is the lean supervisor binary that prestart starts, or
// nil for this program re-executed (none was given, it failed for good,
// or it changed on disk since it was opened).
func (r *Runner) supervisor() *supervisorExe {
	e := r.exe
	if e == nil {
		e = inheritedSupervisor()
	}
	if e == nil || e.failed.Load() {
		return nil
	}
	if e.changed() {
		e.failed.Store(true)
		return nil
	}
	return e
}

// A plugin adopts the supervisor binary its host handed it as it starts,
// so the inherited descriptor is never passed on to a process it starts
// before its first run.
func init() { inheritedSupervisor() }

// supervisorStat is what the binary was when it was opened.
type supervisorStat = unix.Stat_t
