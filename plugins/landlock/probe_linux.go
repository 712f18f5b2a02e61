package landlock

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/runner"
)

// detect inspects the kernel. It never fails: what is missing is reported.
func detect() Features {
	f := Features{Uid: os.Geteuid()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		f.Kernel = unix.ByteSliceToString(u.Release[:])
	}
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
	f.Cgroups = cgroupNames()
	if iso, err := runner.ProbeIsolation(); err != nil {
		f.Namespaces = "none (" + err.Error() + ")"
	} else {
		f.ReadOnlyView = iso.Mount
		f.Namespaces = "pid, mount"
		if iso.User {
			f.Namespaces += ", user"
		}
	}
	return f
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
