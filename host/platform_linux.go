package host

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func detectPlatform(p *Platform) {
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		p.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1)
	switch {
	case errno == 0:
		p.Features["landlock"] = "ABI " + strconv.Itoa(int(abi))
	case errno == unix.EOPNOTSUPP:
		p.Features["landlock"] = "disabled at boot"
	default:
		p.Features["landlock"] = "not available (" + errno.Error() + ")"
	}
	p.Features["user_namespaces"] = userns()
	p.Features["seccomp"] = "no"
	if data, err := os.ReadFile("/proc/self/status"); err == nil && strings.Contains(string(data), "\nSeccomp:") {
		p.Features["seccomp"] = "yes"
	}
	if os.Geteuid() == 0 {
		p.Features["running_as"] = "root"
	} else {
		p.Features["running_as"] = "uid " + strconv.Itoa(os.Geteuid())
	}
}

func userns() string {
	if v, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(v)) == "0" {
		return "disabled (kernel.unprivileged_userns_clone=0)"
	}
	if v, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(v)) == "0" {
		return "disabled (user.max_user_namespaces=0)"
	}
	if v, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && strings.TrimSpace(string(v)) == "1" {
		return "restricted by AppArmor"
	}
	return "available"
}
