//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// setIDBits are S_ISUID and S_ISGID: no run may set either on any file of
// its write grant, lest a root run leave a set-uid program behind.
const setIDBits = unix.S_ISUID | unix.S_ISGID

// modeArgs names, for each system call that sets a file's mode, the
// argument that holds it. open and openat create only with O_CREAT, but a
// set-id bit in the mode argument is refused either way: nothing needs it.
var modeArgs = map[string]int{
	"chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2,
	"open": 2, "openat": 3, "creat": 1,
	"mkdir": 1, "mkdirat": 2, "mknod": 1, "mknodat": 2,
}

// namespaceFlags are the clone(2) and unshare(2) flags that create
// namespaces. Without capabilities (bwrap drops them all) only a user
// namespace could be made, and in one every capability comes back.
const namespaceFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// deniedSyscalls fail with EPERM: io_uring would open and create files
// where the filter cannot see the mode, and setns would join a namespace
// by descriptor.
var deniedSyscalls = []string{"io_uring_setup", "io_uring_enter", "io_uring_register", "setns"}

// seccompPolicy refuses (EPERM) what the namespaces and mounts leave
// open: setting a set-uid or set-gid bit (chmod, creating a file, a
// directory or a node with one), a new namespace (clone or unshare with a
// namespace flag), and a lease (fcntl F_SETLEASE), which would make every
// other opener of a readable file, the host's processes too, wait for the
// run. clone3 and openat2 pass their flags and mode in memory, where a
// filter cannot look: they report ENOSYS, and libc falls back to clone and
// openat.
func seccompPolicy() (seccomp.Policy, error) {
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
	names := make([]string, 0, len(modeArgs))
	for n := range modeArgs {
		names = append(names, n)
	}
	sort.Strings(names)
	var conditional []seccomp.NameWithConditions
	for _, name := range known(names...) {
		conditional = append(conditional, seccomp.NameWithConditions{Name: name,
			Conditions: []seccomp.Condition{{Argument: uint32(modeArgs[name]), Operation: seccomp.BitsSet, Value: setIDBits}}})
	}
	for _, name := range known("clone", "unshare") {
		conditional = append(conditional, seccomp.NameWithConditions{Name: name,
			Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceFlags}}})
	}
	conditional = append(conditional, seccomp.NameWithConditions{Name: "fcntl",
		Conditions: []seccomp.Condition{{Argument: 1, Operation: seccomp.Equal, Value: unix.F_SETLEASE}}})
	enosys := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{
		{Names: known(deniedSyscalls...), Action: seccomp.ActionErrno},
		{Names: known("clone3", "openat2"), Action: enosys},
		{NamesWithCondtions: conditional, Action: seccomp.ActionErrno},
	}}, nil
}

// seccompProgram is the policy as bwrap's --seccomp reads it: an array of
// struct sock_filter (u16 code, u8 jt, u8 jf, u32 k, in the machine's
// byte order). The policy is preceded by an architecture check that kills
// a process making a system call through another ABI (int 0x80 on
// x86-64), whose numbers the policy would misread, and by a check that
// answers ENOSYS to a system call newer than the policy's table (or an x32
// one): the filter cannot judge it. Nothing in it depends on the run, so
// it is assembled once.
var seccompProgram = sync.OnceValues(assembleSeccomp)

func assembleSeccomp() ([]byte, error) {
	pol, err := seccompPolicy()
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
	highest := 0
	for _, nr := range info.SyscallNames {
		highest = max(highest, nr)
	}
	prog := append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: uint32(highest), SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}, body...)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, r := range raw {
		binary.Write(&buf, binary.NativeEndian, unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K})
	}
	return buf.Bytes(), nil
}

// seccompFile is a memory file holding the program, at offset 0, for bwrap
// to read through an inherited descriptor.
func seccompFile() (*os.File, error) {
	prog, err := seccompProgram()
	if err != nil {
		return nil, fmt.Errorf("build the seccomp filter: %w", err)
	}
	fd, err := unix.MemfdCreate("skillhost-bwrap-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create the seccomp filter's memory file: %w", err)
	}
	f := os.NewFile(uintptr(fd), "seccomp")
	if _, err := f.Write(prog); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the seccomp filter: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("rewind the seccomp filter: %w", err)
	}
	return f, nil
}
