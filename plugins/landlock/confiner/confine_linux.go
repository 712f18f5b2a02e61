package confiner

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/runner"
)

// Option registers the Landlock confiner with a runner under Name:
// isolated, with its cgroups prepared ahead of time. The plugin's runner and
// the lean supervisor binary both take it, so either can be the run's
// supervisor and confine helper.
func Option() runner.Option {
	return runner.WithConfiner(Name, runner.Confinement{Confine: confine, Prepare: prepareCgroups, Isolate: true})
}

// confine runs in the run's supervisor (or, where the kernel refused
// namespaces, its confine helper), on the thread the script is then
// started from, and applies a Policy to it for good: cgroup limits,
// resource limits, the run's filesystem view and network namespace,
// capabilities, no_new_privs, Landlock, then seccomp. Every path the host
// resolved (skill, grant, interpreters) is opened once, refusing symlinks
// anywhere along it, and the bind mounts and Landlock rules are made from
// those very handles, so no path can be swapped between check and use.
func confine(payload []byte, iso runner.Isolation) error {
	p, err := DecodePolicy(payload)
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	hs, err := openHandles(p.Canonical)
	if err != nil {
		return err
	}
	defer hs.close()
	if p.Cgroups {
		if err := limitCgroups(p.Limits); err != nil {
			return err
		}
	}
	if err := setLimits(p, iso.User); err != nil {
		return err
	}
	view := p.View != nil && iso.Mount
	if p.View != nil && !iso.Mount {
		return fmt.Errorf("the kernel refused the run's namespaces, so its filesystem view cannot be built; %s", RemedyNoNamespaces)
	}
	if view {
		if err := buildView(p.View, hs); err != nil {
			return fmt.Errorf("filesystem view: %w", err)
		}
		if err := hs.reopenStaged(p.View); err != nil {
			return fmt.Errorf("filesystem view: %w", err)
		}
	}
	if !p.Network {
		// A network namespace of its own, with nothing in it: no socket of
		// any family reaches outside the run, abstract Unix sockets
		// included. Only where the thread may (root, or a user namespace);
		// elsewhere seccomp and Landlock still refuse sockets.
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil && (view || p.Egress != nil) {
			return fmt.Errorf("network namespace: %w", err)
		}
	}
	if p.Egress != nil {
		if !iso.PID {
			return fmt.Errorf("network by name needs the run's namespaces; %s", RemedyNoNamespaces)
		}
		if err := routeEgress(p.Egress); err != nil {
			return fmt.Errorf("egress route: %w", err)
		}
	}
	if p.DropCaps || iso.User {
		if err := dropCapabilities(); err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if p.ABI > 0 {
		if err := restrict(p, hs); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	filter := p.Seccomp
	if !view {
		// No read-only view here: metadata changes cannot be confined to
		// the grant, so they are refused everywhere.
		filter = p.SeccompNoMounts
	}
	if err := loadSeccomp(filter); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

func setLimits(p Policy, userNS bool) error {
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
	switch {
	case userNS && l.Processes > 0:
		// A user namespace counts its own processes from zero; one more
		// for the supervisor that waits as its init.
		if err := set("processes", unix.RLIMIT_NPROC, l.Processes+1); err != nil {
			return err
		}
	case p.NprocBase > 0 && l.Processes > 0:
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

// dropCapabilities leaves the calling thread with none: the bounding and
// ambient sets are emptied, uid 0 no longer gains capabilities on exec, and
// the permitted, effective and inheritable sets are cleared. Without
// CAP_SYS_RESOURCE a script cannot raise its limits; without
// CAP_DAC_OVERRIDE root's file access follows the permission bits; without
// CAP_SYS_ADMIN in its user namespace it cannot undo the read-only view.
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
