package runner

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
)

// minSupervisorFD is the lowest descriptor number the runner keeps its
// supervisor binary at: above every descriptor a child is given
// (prestart's and the confine helper's Files, a wrapper's ExtraFiles), so
// that setting up the child's descriptors never lands on it before the
// exec that opens it by /proc/self/fd.
const minSupervisorFD = 100

// openSupervisor keeps a close-on-exec copy of fd, checked to be a regular
// file someone may execute.
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
	return &supervisorExe{path: "/proc/self/fd/" + strconv.Itoa(own)}, nil
}

// inheritedSupervisor is the supervisor binary this process's host handed
// it (shared.EnvSupervisorFD), or nil. The variable is removed from the
// environment and the inherited descriptor closed once a copy is kept.
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
	unix.Close(fd)
	if err != nil {
		return nil
	}
	return e
})

// supervisorPath is the binary that prestart starts, and whether it is a
// lean supervisor (not this program).
func (r *Runner) supervisorPath() (*supervisorExe, string) {
	e := r.exe
	if e == nil {
		e = inheritedSupervisor()
	}
	if e == nil || e.failed.Load() {
		return nil, selfExe
	}
	return e, e.path
}

// A plugin adopts the supervisor binary its host handed it as it starts,
// so the inherited descriptor is never passed on to a process it starts
// before its first run.
func init() { inheritedSupervisor() }
