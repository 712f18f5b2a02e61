package landlock

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
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
	f.Cgroups = confiner.CgroupNames()
	f.Namespaces, f.ReadOnlyView = namespaces(f.Uid)
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

// namespaces says which namespaces confine helpers will ask for, without
// starting a process to find out (a plugin serving one call would pay a
// Go start-up for it). Whether the kernel grants them is known per run: a
// helper that had to start without them makes its result say so.
func namespaces(uid int) (string, bool) {
	if os.Getenv(runner.EnvNoNamespaces) == "1" {
		return "none (" + runner.EnvNoNamespaces + " is set)", false
	}
	if uid == 0 {
		return "pid, mount", true
	}
	data, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err == nil && strings.TrimSpace(string(data)) == "0" {
		return "none (user namespaces are disabled: user.max_user_namespaces is 0)", false
	}
	return "pid, mount, user", true
}
