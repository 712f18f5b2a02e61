//go:build linux

// Package seccomppolicy is the Landlock plugin's seccomp policy: which
// system calls a confined script may not make, and with which arguments,
// assembled into a BPF program for the architecture it is built for.
//
// On x86-64 the plugin does not link it: it runs the programs of a table
// written from this package (zseccomp_linux_amd64.go), which
// TestSeccompFilterTable compares with a fresh assembly and -update
// rewrites. Assembling at run time cost a one-shot run about 1.5 ms, the
// system call tables' initialiser and two programs (docs/performance.md).
// Elsewhere the plugin assembles at run time, once per kind of run.
package seccomppolicy

import (
	"sort"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Key is what tells one run's filter from another's.
type Key struct {
	Network      bool // the network is on
	Loopback     bool // the network is by name: a namespace's loopback only
	LandlockUnix bool // Landlock confines pathname Unix sockets (ABI 9)
	NoMetadata   bool // metadata changes are refused everywhere (no read-only view)
}

// Keys is every Key, in the order of Index.
func Keys() []Key {
	out := make([]Key, 16)
	for i := range out {
		out[i] = Key{Network: i&1 != 0, Loopback: i&2 != 0, LandlockUnix: i&4 != 0, NoMetadata: i&8 != 0}
	}
	return out
}

// Index is k's place in Keys.
func (k Key) Index() int {
	i := 0
	for bit, on := range []bool{k.Network, k.Loopback, k.LandlockUnix, k.NoMetadata} {
		if on {
			i |= 1 << bit
		}
	}
	return i
}

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
	"move_mount", "open_tree", "open_tree_attr", "mount_setattr", "unshare", "setns",
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
	"kcmp",
	// The mount table of any namespace, by id: a view hides the host's
	// paths, and these would list them again.
	"listmount", "statmount",
}

// metadataSyscalls change a file's mode, owner, times or extended
// attributes. Landlock has no right for them; a read-only view of all but
// the grant refuses them outside it. Without that view (no private mount
// namespace) they are refused everywhere.
var metadataSyscalls = []string{
	"chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "utimensat", "futimesat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
}

// watchSyscalls observe other files' activity; neither Landlock nor a
// read-only mount confines them to the grant.
var watchSyscalls = []string{"inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark"}

// setIDBits are S_ISUID and S_ISGID: no confined script may set either,
// on any file, lest a root script leave a set-uid copy of a program behind.
const setIDBits = unix.S_ISUID | unix.S_ISGID

// modeArgs names, for each system call that sets a file's mode, the
// argument that holds it.
var modeArgs = map[string]int{
	"chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2,
	"open": 2, "openat": 3, "creat": 1,
	"mkdir": 1, "mkdirat": 2, "mknod": 1, "mknodat": 2,
}

// selfOnlyArgs names, for each system call that changes scheduling or
// limits of a process chosen by id, the argument holding the id: only 0,
// the caller itself, is allowed. Otherwise a script could renice, pin or
// starve its supervisor, or any other process of its user.
var selfOnlyArgs = map[string]int{
	"prlimit64": 0, "sched_setaffinity": 0, "sched_setscheduler": 0, "sched_setparam": 0,
	"sched_setattr": 0, "migrate_pages": 0, "move_pages": 0,
	"setpriority": 1, "ioprio_set": 1,
}

// namespaceFlags are the clone(2) flags that create namespaces.
const namespaceFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// policy is the filter for one run. Process-directed calls
// (prlimit64, scheduling, I/O priority) may only name the caller (pid 0);
// setpriority and ioprio_set may not name a whole user. No call may set a
// set-uid or set-gid bit, and openat2, whose mode hides in memory, reports
// ENOSYS so libc falls back to openat. Sockets: with the network off,
// socket(2) fails for every family, or, where Landlock confines pathname
// Unix sockets (ABI 9), for every family but AF_UNIX. With the network on,
// only IPv4, IPv6 and netlink (and AF_UNIX with ABI 9); by name (Egress),
// IPv4 and IPv6 in a namespace of loopback alone. A pathname socket
// outside the grant (Docker's, systemd's) would otherwise be one connect(2)
// away.
func policy(info *arch.Info, k Key) seccomp.Policy {
	network, landlockUnix := k.Network, k.LandlockUnix
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
	denied := append(append([]string{}, deniedSyscalls...), watchSyscalls...)
	if k.NoMetadata {
		denied = append(denied, metadataSyscalls...)
	}
	var conditional []seccomp.NameWithConditions
	for _, name := range known(sortedKeys(modeArgs)...) {
		conditional = append(conditional, seccomp.NameWithConditions{Name: name,
			Conditions: []seccomp.Condition{{Argument: uint32(modeArgs[name]), Operation: seccomp.BitsSet, Value: setIDBits}}})
	}
	for _, name := range known(sortedKeys(selfOnlyArgs)...) {
		conditional = append(conditional, seccomp.NameWithConditions{Name: name,
			Conditions: []seccomp.Condition{{Argument: uint32(selfOnlyArgs[name]), Operation: seccomp.NotEqual, Value: 0}}})
	}
	conditional = append(conditional,
		seccomp.NameWithConditions{Name: "clone", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceFlags}}},
		seccomp.NameWithConditions{Name: "setpriority", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.Equal, Value: unix.PRIO_USER}}},
		seccomp.NameWithConditions{Name: "ioprio_set", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.Equal, Value: ioprioWhoUser}}},
		// A lease makes every other opener of the file, the host's
		// processes included, wait for the holder: a read grant must not
		// let a script stall writers of /etc/hosts.
		seccomp.NameWithConditions{Name: "fcntl", Conditions: []seccomp.Condition{{Argument: 1, Operation: seccomp.Equal, Value: unix.F_SETLEASE}}},
	)
	groups := []seccomp.SyscallGroup{
		{Names: known(denied...), Action: seccomp.ActionErrno},
		// clone3 passes its flags in memory, where a filter cannot look;
		// ENOSYS makes libc fall back to clone, whose flags it can.
		{Names: known("clone3", "openat2"), Action: enosys},
		{NamesWithCondtions: conditional, Action: seccomp.ActionErrno},
	}
	var allowed []uint64
	switch {
	case network:
		allowed = []uint64{unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}
		if landlockUnix {
			allowed = append(allowed, unix.AF_UNIX)
		}
	case k.Loopback:
		// A run by name: IP sockets reach only its namespace's loopback,
		// where its relay to the proxy listens.
		allowed = []uint64{unix.AF_INET, unix.AF_INET6}
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
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}
}

// ioprioWhoUser is IOPRIO_WHO_USER: every process of a user.
const ioprioWhoUser = 3

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Program is the filter for a run of kind k: the policy's program,
// preceded by an architecture check that kills the process for a system
// call made through another ABI (32-bit int 0x80 on x86-64), which the
// policy's own check would let through.
func Program(k Key) ([]bpf.Instruction, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, err
	}
	pol := policy(info, k)
	body, err := pol.Assemble()
	if err != nil {
		return nil, err
	}
	highest := 0
	for _, nr := range info.SyscallNames {
		highest = max(highest, nr)
	}
	return append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
		// A system call newer than this table (or an x32 one, whose
		// number has bit 30 set) is one the filter cannot judge: ENOSYS.
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: uint32(highest), SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}, body...), nil
}

// Filter is Program assembled into the form the kernel loads.
func Filter(k Key) ([]unix.SockFilter, error) {
	prog, err := Program(k)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return f, nil
}
