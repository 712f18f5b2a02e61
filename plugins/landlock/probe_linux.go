package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// detect inspects the kernel. It never fails: what is missing is reported.
func detect() Features {
	f := Features{Uid: os.Geteuid()}
	raw, err := ll.LandlockGetABIVersion()
	switch {
	case err == nil:
		f.RawABI = raw
		f.ABI = raw
		if raw >= 6 {
			// The signal scope had a bug fixed by erratum 2; without the fix
			// the scopes cannot be trusted.
			if errata, err := ll.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
				f.ABI = 5
			}
		}
	case errors.Is(err, unix.EOPNOTSUPP):
		f.Missing = "Landlock is built into this kernel but disabled (add landlock to the lsm= boot parameter)"
	default:
		f.Missing = fmt.Sprintf("Landlock is not available in this kernel (%v)", err)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		f.Seccomp = true
	}
	f.Cgroup = cgroupRoot(f.Uid == 0)
	return f
}

// cgroupRoot returns a cgroup directory under which this process can create
// per-run cgroups with a pids controller, or "". Only root needs one:
// RLIMIT_NPROC does not apply to uid 0.
func cgroupRoot(root bool) string {
	if !root {
		return ""
	}
	candidates := []string{"/sys/fs/cgroup/pids"} // cgroup v1
	if data, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil && strings.Contains(string(data), "pids") {
		candidates = append([]string{"/sys/fs/cgroup"}, candidates...) // cgroup v2 with pids delegated
	}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c, "cgroup.procs")); err != nil {
			continue
		}
		if unix.Access(c, unix.W_OK) == nil {
			return c
		}
	}
	return ""
}

// nprocOf counts the processes of uid, for a relative RLIMIT_NPROC. A
// /proc/<pid> directory belongs to its process's user, so a stat each is
// enough.
func nprocOf(uid int) int64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+e.Name(), &st) == nil && int(st.Uid) == uid {
			n++
		}
	}
	return n
}
