package landlock

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM for every confined script: kernel
// interfaces a script has no business with, and ways around the other
// layers (ptrace and process_vm_* to reach other processes, io_uring to
// open sockets and files behind seccomp's back, namespaces and mounts to
// rearrange what paths mean, open_by_handle_at to skip path checks).
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsmount", "fsconfig", "fspick",
	"move_mount", "open_tree", "mount_setattr", "unshare", "setns",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"acct", "swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"iopl", "ioperm", "quotactl", "lookup_dcookie", "vhangup", "open_by_handle_at", "name_to_handle_at",
	"syslog", "uselib",
	// System V and POSIX message-queue IPC live outside the file system, so
	// Landlock cannot confine them: a script could attach another process's
	// shared memory, or leave segments behind that no limit counts.
	"shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
	"semget", "semop", "semtimedop", "semctl",
	"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
}

// namespaceFlags are the clone(2) flags that create namespaces.
const namespaceFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// seccompPolicy is the filter for one run. prlimit64 may change only the
// caller's own limits (pid 0): lowering another process's limits needs no
// privilege and would let a script cripple its supervisor or the host.
// Sockets: with the network off, socket(2) fails for every family, or,
// where Landlock confines pathname Unix sockets (ABI 9), for every family
// but AF_UNIX. With the network on, only IPv4, IPv6 and netlink (and
// AF_UNIX with ABI 9): a pathname socket outside the grant (Docker's,
// systemd's) would otherwise be one connect(2) away.
func seccompPolicy(network, landlockUnix bool) (seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, err
	}
	known := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if _, ok := info.SyscallNames[n]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	enosys := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	groups := []seccomp.SyscallGroup{
		{Names: known(deniedSyscalls...), Action: seccomp.ActionErrno},
		// clone3 passes its flags in memory, where a filter cannot look;
		// ENOSYS makes libc fall back to clone, whose flags it can.
		{Names: known("clone3"), Action: enosys},
		{NamesWithCondtions: []seccomp.NameWithConditions{
			{Name: "clone", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceFlags}}},
			{Name: "prlimit64", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.NotEqual, Value: 0}}},
		}, Action: seccomp.ActionErrno},
	}
	var allowed []uint64
	switch {
	case network:
		allowed = []uint64{unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}
		if landlockUnix {
			allowed = append(allowed, unix.AF_UNIX)
		}
	case landlockUnix:
		allowed = []uint64{unix.AF_UNIX}
	}
	if len(allowed) == 0 {
		groups = append(groups, seccomp.SyscallGroup{Names: known("socket"), Action: seccomp.ActionErrno})
	} else {
		var conds []seccomp.Condition // all must hold: the family is none of these
		for _, af := range allowed {
			conds = append(conds, seccomp.Condition{Argument: 0, Operation: seccomp.NotEqual, Value: af})
		}
		groups = append(groups, seccomp.SyscallGroup{NamesWithCondtions: []seccomp.NameWithConditions{{Name: "socket", Conditions: conds}}, Action: seccomp.ActionErrno})
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}, nil
}

// Filter is an assembled seccomp program.
type Filter []unix.SockFilter

var filterCache sync.Map // filterKey -> Filter

type filterKey struct{ network, landlockUnix bool }

// seccompFilter assembles (once per kind) the filter for a run: the
// policy's program, preceded by an architecture check that kills the
// process for a system call made through another ABI (32-bit int 0x80 on
// x86-64), which the policy's own check would let through.
func seccompFilter(network, landlockUnix bool) (Filter, error) {
	key := filterKey{network, landlockUnix}
	if f, ok := filterCache.Load(key); ok {
		return f.(Filter), nil
	}
	pol, err := seccompPolicy(network, landlockUnix)
	if err != nil {
		return nil, err
	}
	body, err := pol.Assemble()
	if err != nil {
		return nil, err
	}
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, err
	}
	prog := append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	}, body...)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, err
	}
	f := make(Filter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	filterCache.Store(key, f)
	return f, nil
}

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
