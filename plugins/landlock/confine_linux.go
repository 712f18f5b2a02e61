package landlock

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/runner"
)

func init() { runner.RegisterConfiner(confinerName, confine) }

// confine runs in the short-lived confine helper, on the thread that then
// execs the script, and applies a Policy to it for good: cgroup, resource
// limits, capabilities, no_new_privs, Landlock, then seccomp.
func confine(payload []byte) error {
	var p Policy
	if err := json.Unmarshal(payload, &p); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	if err := checkCanonical(p.Canonical); err != nil {
		return err
	}
	if p.Cgroups {
		if err := limitCgroups(p.Limits); err != nil {
			return err
		}
	}
	if err := setLimits(p); err != nil {
		return err
	}
	if p.DropCaps {
		if err := dropCapabilities(); err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if p.ABI > 0 {
		if err := restrict(p); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if err := loadSeccomp(p.Seccomp); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

func setLimits(p Policy) error {
	set := func(name string, res int, v int64) error {
		if v <= 0 {
			return nil
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: uint64(v), Max: uint64(v)}); err != nil {
			return fmt.Errorf("set %s limit to %d: %w", name, v, err)
		}
		return nil
	}
	l := p.Limits
	if err := set("open files", unix.RLIMIT_NOFILE, l.OpenFiles); err != nil {
		return err
	}
	if err := set("file size", unix.RLIMIT_FSIZE, l.FileSize); err != nil {
		return err
	}
	if err := set("memory", unix.RLIMIT_DATA, l.Memory); err != nil {
		return err
	}
	if p.NprocBase > 0 && l.Processes > 0 {
		if err := set("processes", unix.RLIMIT_NPROC, p.NprocBase+l.Processes); err != nil {
			return err
		}
	}
	// A core dump could write a script's memory, secrets included, to disk.
	return unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
}

// Secure bits that keep uid 0 from regaining capabilities on exec.
const (
	secbitNoRoot               = 1 << 0
	secbitNoRootLocked         = 1 << 1
	secbitNoSetuidFixup        = 1 << 2
	secbitNoSetuidFixupLocked  = 1 << 3
	secbitKeepCapsLocked       = 1 << 5
	secbitNoCapAmbientRaise    = 1 << 6
	secbitNoCapAmbientRaiseLck = 1 << 7
)

// dropCapabilities leaves a root script with none: the bounding and
// ambient sets are emptied, uid 0 no longer gains capabilities on exec, and
// the permitted, effective and inheritable sets are cleared. Without
// CAP_SYS_RESOURCE a script cannot raise its limits; without
// CAP_DAC_OVERRIDE root's file access follows the permission bits.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbitNoRoot|secbitNoRootLocked|secbitNoSetuidFixup|
		secbitNoSetuidFixupLocked|secbitKeepCapsLocked|secbitNoCapAmbientRaise|secbitNoCapAmbientRaiseLck, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL {
				break // past the last capability this kernel knows
			}
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("ambient set: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// restrict applies the Landlock part of the policy: file rules, TCP rules
// when the network is off, and signal and abstract-socket scopes.
func restrict(p Policy) error {
	cfg := landlock.Config{HandledAccessFS: fsRights(p.ABI)}
	if !p.Network && p.ABI >= 4 {
		cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if p.ABI >= 6 {
		cfg.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	rw := landlock.RWDirs(p.RWDirs...).IgnoreIfMissing()
	if p.ABI >= 2 {
		rw = rw.WithRefer() // renames and links within writable trees
	}
	if p.ABI >= 9 {
		rw = rw.WithResolveUnix() // Unix sockets inside the writable grant
	}
	rules := []landlock.Rule{
		landlock.RODirs(p.RODirs...).IgnoreIfMissing(),
		landlock.ROFiles(p.ROFiles...).IgnoreIfMissing(),
		rw,
		landlock.RWFiles(p.RWFiles...).IgnoreIfMissing(),
	}
	return cfg.BestEffort().Restrict(rules...)
}

// fsRights returns every filesystem right the ABI knows, so everything not
// granted is denied.
func fsRights(abi int) landlock.AccessFSSet {
	n := map[int]uint{1: 13, 2: 14, 3: 15, 4: 15, 5: 16, 6: 16, 7: 16, 8: 16}[abi]
	if abi >= 9 {
		n = 17
	}
	return landlock.AccessFSSet(1<<n - 1)
}

// checkCanonical refuses to confine with paths that no longer resolve to
// themselves: the policy's rules would follow the new symlinks.
func checkCanonical(paths []string) error {
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // missing: Landlock skips it too
		}
		if real != p {
			return fmt.Errorf("grant path %s now resolves to %s: it changed after the grant was computed; refusing to run", p, real)
		}
	}
	return nil
}
