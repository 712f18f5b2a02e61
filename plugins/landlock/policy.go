package landlock

import (
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// systemDirs are what programs need to start and run: binaries, libraries
// and their data. On a merged-/usr system the others are symlinks into
// /usr; a rule on a symlink applies to its target.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// systemEtc are the few /etc entries the loader, libc (users, hosts, name
// service, locale, time zone), TLS and common interpreters read. All of
// /etc is never granted: /etc/shadow, /etc/ssh and friends stay closed.
var systemEtc = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf",
	"/etc/resolv.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
	"/etc/localtime", "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale",
	"/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/pki", "/etc/crypto-policies",
	"/etc/mime.types", "/etc/os-release", "/etc/debian_version", "/etc/alternatives",
	"/etc/python3", "/etc/python3.*", "/etc/perl", "/etc/ruby",
}

// devRead and devWrite are the device files a script may use; the /proc
// files are machine-wide facts runtimes size themselves by. The rest of
// /proc stays closed: other processes' command lines and environments
// are none of a script's business.
var (
	devRead  = []string{"/dev/zero", "/dev/urandom", "/dev/random", "/proc/cpuinfo", "/proc/meminfo"}
	devWrite = []string{"/dev/null"}
)

// Policy is everything one confined run may touch. It is computed by Build,
// a deterministic function of the request and the machine's file tree, and
// travels as JSON to the confine helper that enforces it.
type Policy struct {
	// ABI is the Landlock ABI to use; 0 means Landlock is not applied.
	ABI int `json:"abi"`
	// Read-only (and executable) directories and files.
	RODirs  []string `json:"ro_dirs"`
	ROFiles []string `json:"ro_files"`
	// Read-write directories and files.
	RWDirs  []string `json:"rw_dirs"`
	RWFiles []string `json:"rw_files"`
	// Network allows every socket; otherwise TCP is denied by Landlock and
	// socket creation by seccomp.
	Network bool `json:"network"`
	// Limits bound resources; zero fields are unlimited.
	Limits Limits `json:"limits"`
	// NprocBase is the number of processes the script's user already runs;
	// RLIMIT_NPROC is set to NprocBase+Limits.Processes. Zero: not set.
	NprocBase int64 `json:"nproc_base,omitempty"`
	// Cgroups enforces the process and memory limits with cgroups (for
	// root, where RLIMIT_NPROC does not apply), besides the rlimits.
	Cgroups bool `json:"cgroups,omitempty"`
	// DropCaps removes every capability from a root script.
	DropCaps bool `json:"drop_caps"`
	// Seccomp is the assembled seccomp program, built by the plugin (once
	// per kind) so the helper only loads it. SeccompNoMounts is the one
	// for a helper without a private mount namespace: with no read-only
	// view to confine them, it refuses metadata changes (chmod, chown,
	// utimes, extended attributes) everywhere.
	Seccomp         Filter `json:"seccomp,omitempty"`
	SeccompNoMounts Filter `json:"seccomp_no_mounts,omitempty"`
	// Canonical lists the request's paths (skill, grant, interpreters),
	// which the host resolved through every symlink: each must still
	// resolve to itself when the helper applies the policy, or something
	// swapped a directory for a symlink since.
	Canonical []string `json:"canonical,omitempty"`
}

// Encode is the policy as the confine helper receives it: gob, which keeps
// paths that are not UTF-8 byte for byte (JSON would not).
func (p Policy) Encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodePolicy reverses Encode.
func DecodePolicy(data []byte) (Policy, error) {
	var p Policy
	err := gob.NewDecoder(bytes.NewReader(data)).Decode(&p)
	return p, err
}

// Limits are the request's resource limits.
type Limits = shared.Limits

// Env is what Build needs to know about the machine and the run.
type Env struct {
	// ABI is the kernel's effective Landlock ABI.
	ABI int
	// TempDir is the run's private temporary directory (writable).
	TempDir string
	// Root reports whether scripts run as root (capabilities are dropped).
	Root bool
	// Stat classifies paths; nil means os.Stat.
	Stat func(string) (os.FileInfo, error)
	// Glob expands patterns in systemEtc; nil means filepath.Glob.
	Glob func(string) ([]string, error)
}

// Build computes the policy of req. Readable: the system roots, the /etc
// entries above, a few devices, the skill directory, the grant's fs_read
// and the interpreter paths. Writable: the grant's fs_write, /dev/null and
// the private temporary directory. Nothing else: not $HOME, not the
// working directory unless granted.
func Build(req shared.Request, env Env) Policy {
	if env.Stat == nil {
		env.Stat = os.Stat
	}
	if env.Glob == nil {
		env.Glob = filepath.Glob
	}
	p := Policy{ABI: env.ABI, Network: req.Grant.Network, Limits: Limits(req.Limits), DropCaps: env.Root}
	var ro, rw []string
	ro = append(ro, systemDirs...)
	for _, e := range systemEtc {
		if strings.ContainsAny(e, "*?[") {
			matches, _ := env.Glob(e)
			ro = append(ro, matches...)
			continue
		}
		ro = append(ro, e)
	}
	ro = append(ro, devRead...)
	ro = append(ro, req.SkillDir)
	ro = append(ro, req.Grant.FSRead...)
	ro = append(ro, req.ExecPaths...)
	rw = append(rw, devWrite...)
	rw = append(rw, req.Grant.FSWrite...)
	if env.TempDir != "" {
		rw = append(rw, env.TempDir)
	}
	p.RODirs, p.ROFiles = classify(ro, env.Stat)
	p.RWDirs, p.RWFiles = classify(rw, env.Stat)
	for _, list := range [][]string{{req.SkillDir}, req.Grant.FSRead, req.Grant.FSWrite, req.ExecPaths} {
		for _, c := range list {
			if c != "" && !slices.Contains(p.Canonical, c) {
				p.Canonical = append(p.Canonical, c)
			}
		}
	}
	return p
}

// classify splits paths into directories and other files, dropping empty
// and missing ones (Landlock rules need an existing file). Duplicates go.
func classify(paths []string, stat func(string) (os.FileInfo, error)) (dirs, files []string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		fi, err := stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	return dedupe(dirs), dedupe(files)
}

func dedupe(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// Readable reports whether path is inside something the policy lets
// scripts read.
func (p Policy) Readable(path string) bool {
	return shared.UnderAny(path, p.RODirs) || shared.UnderAny(path, p.RWDirs) || slices.Contains(p.ROFiles, path) || slices.Contains(p.RWFiles, path)
}

// Writable reports whether path is inside something the policy lets
// scripts write.
func (p Policy) Writable(path string) bool {
	return shared.UnderAny(path, p.RWDirs) || slices.Contains(p.RWFiles, path)
}
