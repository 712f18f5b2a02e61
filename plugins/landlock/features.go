package landlock

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// Features is what the kernel offers the plugin.
type Features struct {
	// RawABI is the ABI the kernel reports; ABI the one used (lowered when
	// a needed erratum is missing).
	RawABI, ABI int
	// Kernel is the kernel's release, for doctor.
	Kernel string
	// Missing explains why Landlock is unavailable, if it is.
	Missing string
	Seccomp bool
	// Cgroups lists the cgroup controllers per-run cgroups get (root only).
	Cgroups []string
	Uid     int
	// Namespaces says which namespaces confine helpers get, or why none.
	Namespaces string
	// ReadOnlyView: helpers get a private mount namespace, so everything
	// outside the write grant is read-only for scripts.
	ReadOnlyView bool
}

// Layers lists which protections are active, by name.
func (f Features) Layers() map[string]bool {
	return map[string]bool{
		"fs":      f.ABI >= 1,
		"net":     f.ABI >= 4 || f.Seccomp,
		"scopes":  f.ABI >= 6,
		"seccomp": f.Seccomp,
	}
}

// ProcessLimit says how the processes limit is enforced.
func (f Features) ProcessLimit() string {
	switch {
	case f.Uid != 0:
		return "rlimit"
	case hasPrefix(f.Cgroups, "pids"):
		return "cgroup " + strings.Join(f.Cgroups, ", ")
	}
	return "none (root without a writable pids cgroup)"
}

// NotEnforced lists what a run on this kernel cannot enforce.
func (f Features) NotEnforced() []string {
	var out []string
	if f.ABI < 1 {
		out = append(out, "filesystem confinement ("+f.Missing+")")
	}
	if f.ABI < 4 && !f.Seccomp {
		out = append(out, "network confinement (needs Landlock ABI 4 or seccomp)")
	} else if f.ABI < 4 {
		out = append(out, "Landlock TCP rules (ABI 4); seccomp still denies sockets")
	}
	if f.ABI < 6 {
		out = append(out, "signal and abstract-socket scoping (needs Landlock ABI 6)")
	}
	if !f.Seccomp {
		out = append(out, "seccomp filter (UDP, raw and netlink sockets, ptrace, namespaces)")
	}
	if f.Uid == 0 && !hasPrefix(f.Cgroups, "pids") {
		out = append(out, "process limit (running as root without a writable pids cgroup)")
	}
	if !hasPrefix(f.Cgroups, "memory") {
		out = append(out, "memory in shared mappings (RLIMIT_DATA counts private memory only; a memory cgroup needs root)")
	}
	return out
}

// Probe reports the features as a shared.Probe: unsupported without
// Landlock or seccomp, healthy otherwise, with every layer in the details.
func (f Features) Probe() shared.Probe {
	layers := f.Layers()
	var on []string
	for _, l := range []string{"fs", "net", "scopes", "seccomp"} {
		if layers[l] {
			on = append(on, l)
		}
	}
	details := map[string]string{
		"kernel":       f.Kernel,
		"landlock_abi": strconv.Itoa(f.RawABI),
		"layers":       strings.Join(on, ", "),
		"processes":    f.ProcessLimit(),
		"namespaces":   f.Namespaces,
		"running_as":   "uid " + strconv.Itoa(f.Uid),
	}
	if f.ABI != f.RawABI {
		details["landlock_abi_used"] = strconv.Itoa(f.ABI) + " (a kernel erratum is not fixed)"
	}
	if f.Uid == 0 {
		details["capabilities"] = "dropped for scripts"
	}
	if f.ReadOnlyView {
		details["mode"] = "view + Landlock + seccomp"
		details["outside_the_grant"] = "does not exist: each run's file system is built from its grant (tmpfs root, binds, private /tmp, pivot_root)"
	} else {
		details["mode"] = "Landlock only (landlock_only): no filesystem view"
		details["outside_the_grant"] = "denied by Landlock, but its metadata, link targets and extended attributes stay readable; metadata changes refused everywhere by seccomp"
	}
	if ne := f.NotEnforced(); len(ne) > 0 {
		details["not_enforced"] = strings.Join(ne, "; ")
	}
	switch {
	case f.ABI < 1:
		return shared.Probe{Status: shared.Unsupported, Reason: f.Missing, Details: details}
	case !f.Seccomp:
		return shared.Probe{Status: shared.Unsupported, Reason: "seccomp is not available, so sockets cannot be denied", Details: details}
	}
	return shared.Probe{Status: shared.Healthy, Reason: fmt.Sprintf("%s; Landlock ABI %d: %s; namespaces: %s; processes: %s", details["mode"], f.RawABI, strings.Join(on, ", "), f.Namespaces, f.ProcessLimit()), Details: details}
}

func hasPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
