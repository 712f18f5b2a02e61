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
// /etc is never granted: /etc/shadow, /etc/ssh and friends stay closed, and
// of the TLS trees only the public certificates are (never /etc/ssl/private
// or /etc/pki/tls/private, where a machine keeps its private keys).
var systemEtc = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf",
	"/etc/resolv.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
	"/etc/localtime", "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/ca-certificates.conf",
	"/etc/pki/tls/certs", "/etc/pki/tls/cert.pem", "/etc/pki/tls/openssl.cnf", "/etc/pki/ca-trust/extracted",
	"/etc/crypto-policies",
	"/etc/mime.types", "/etc/os-release", "/etc/debian_version", "/etc/alternatives",
	"/etc/python3", "/etc/python3.*", "/etc/perl", "/etc/ruby",
}

// devRead and devWrite are the device files a script may use; the /proc
// files are machine-wide facts runtimes size themselves by. The rest of
// /proc stays closed: other processes' command lines and environments
// are none of a script's business.
var (
	devRead  = []string{"/dev/zero", "/dev/urandom", "/dev/random", "/proc/cpuinfo", "/proc/meminfo"}
	devWrite = []string{"/dev/null", "/dev/full"}
)

// viewDevices are the device nodes of the view's /dev.
var viewDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// ViewTmp is the run's private temporary directory inside the view: a
// tmpfs of the run's own, gone with its mount namespace.
const ViewTmp = "/tmp"

// defaultTmpSize bounds the view's /tmp when the request sets no memory
// limit (tmpfs pages are memory).
const defaultTmpSize = 1 << 30

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
	// Egress, when set (Network is then false), routes the run to its
	// egress proxy: the run's network namespace has only loopback, where
	// the confine helper listens on Port and relays each connection to the
	// proxy at Target, outside; Landlock lets the script connect to Port
	// alone. Execute fills it once the run's proxy listens.
	Egress *Route `json:"egress,omitempty"`
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
	// View is the run's filesystem, built in its mount namespace before
	// Landlock: nothing outside it exists for the script. Nil means no
	// view (Landlock-only mode, where the kernel refuses namespaces).
	View *View `json:"view,omitempty"`
	// Canonical lists the request's paths (skill, grant, interpreters),
	// which the host resolved through every symlink: each must still
	// resolve to itself when the helper applies the policy, or something
	// swapped a directory for a symlink since.
	Canonical []string `json:"canonical,omitempty"`
}

// Route is where a run's egress goes: the port the script connects to on
// its own loopback, and the proxy's address in the plugin's namespace.
type Route struct {
	Port   int    `json:"port"`
	Target string `json:"target"`
}

// View is a run's filesystem: a fresh tmpfs root holding only binds of
// what the run needs, in the way bubblewrap builds one.
type View struct {
	// Binds are mounted in order (a parent before what lies beneath it),
	// each over its own path: read-only unless Write, and Protect marks a
	// read-only bind inside a writable one.
	Binds []Bind `json:"binds"`
	// Devices are device nodes bound into a minimal /dev.
	Devices []string `json:"devices"`
	// TmpSize bounds the private /tmp, in bytes.
	TmpSize int64 `json:"tmp_size"`
	// Dir is the working directory, made an empty directory of the view
	// when no bind holds it.
	Dir string `json:"dir,omitempty"`
}

// Bind is one path of the host shown in a view.
type Bind struct {
	Path    string `json:"path"`
	Write   bool   `json:"write,omitempty"`
	Protect bool   `json:"protect,omitempty"`
	// System marks a path of the system (not the request's): a symlink
	// there is recreated in the view, and a file reached through one is
	// bound where the link was.
	System bool `json:"system,omitempty"`
	// Upper and Work, set on a writable bind of a staged run, make it an
	// overlay of the real directory (read-only beneath) whose changes go
	// to Upper: the host's tree does not change during the run.
	Upper string `json:"upper,omitempty"`
	Work  string `json:"work,omitempty"`
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
	// View builds the run's filesystem view; TempDir is then ViewTmp.
	View bool
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
	// A grant by name gives no direct network: the run reaches only its
	// proxy (Egress).
	p := Policy{ABI: env.ABI, Network: req.Grant.Network && req.Grant.Egress == nil, Limits: Limits(req.Limits), DropCaps: env.Root}
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
	if env.TempDir != "" && !env.View {
		// The view's /tmp is a tmpfs of the run's own, not the host's
		// /tmp: restrict grants it apart.
		rw = append(rw, env.TempDir)
	}
	p.RODirs, p.ROFiles = classify(ro, env.Stat)
	p.RWDirs, p.RWFiles = classify(rw, env.Stat)
	if env.View {
		p.View = layoutView(req, ro, env)
	}
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
	if p.View != nil {
		for _, b := range p.View.Binds {
			if b.Protect && shared.Under(path, b.Path) {
				return false
			}
		}
	}
	return shared.UnderAny(path, p.RWDirs) || slices.Contains(p.RWFiles, path)
}

// layoutView lays out the view of req: every readable path read-only, every
// write grant writable, protected paths inside write grants read-only
// again, in mount order. A path beneath another of the same kind adds
// nothing and is dropped; a writable one beneath a read-only one is kept
// (it is bound over it); a read-only one beneath a writable one is dropped
// too, since the grant lets the script write it.
func layoutView(req shared.Request, ro []string, env Env) *View {
	v := &View{TmpSize: defaultTmpSize, Dir: req.Dir}
	if req.Limits.Memory > 0 {
		v.TmpSize = req.Limits.Memory
	}
	system := map[string]bool{}
	for _, d := range systemDirs {
		system[d] = true
	}
	for _, e := range ro {
		if strings.HasPrefix(e, "/etc/") {
			system[e] = true
		}
	}
	exists := func(p string) bool {
		if p == "" || !filepath.IsAbs(p) {
			return false
		}
		_, err := env.Stat(p)
		return err == nil
	}
	var writable []string
	for _, w := range req.Grant.FSWrite {
		if exists(w) {
			writable = append(writable, w)
		}
	}
	writable = outermost(writable)
	var readable []string
	for _, r := range ro {
		if strings.HasPrefix(r, "/dev/") || strings.HasPrefix(r, "/proc/") || !exists(r) || shared.UnderAny(r, writable) {
			continue
		}
		readable = append(readable, r)
	}
	readable = outermost(readable)
	for _, r := range readable {
		v.Binds = append(v.Binds, Bind{Path: r, System: system[r]})
	}
	for _, w := range writable {
		b := Bind{Path: w, Write: true}
		if req.Stage != "" {
			i := slices.Index(req.Grant.FSWrite, w)
			b.Upper, b.Work = shared.StageUpper(req.Stage, i), shared.StageWork(req.Stage, i)
		}
		v.Binds = append(v.Binds, b)
	}
	// A staged run changes nothing of the host's, so nothing needs
	// guarding inside its writable trees: the host's policy judges each
	// change when it applies them.
	for _, p := range req.Grant.Protected {
		if req.Stage == "" && exists(p) && shared.UnderAny(p, writable) {
			v.Binds = append(v.Binds, Bind{Path: p, Protect: true})
		}
	}
	// A parent is a prefix of its children, so sorting puts it first;
	// at one path a protecting bind comes after the writable one.
	sort.SliceStable(v.Binds, func(i, j int) bool { return v.Binds[i].Path < v.Binds[j].Path })
	for _, d := range viewDevices {
		if exists(d) {
			v.Devices = append(v.Devices, d)
		}
	}
	return v
}

// outermost sorts paths and drops each that lies beneath another.
func outermost(paths []string) []string {
	paths = dedupe(slices.Clone(paths))
	var out []string
	for _, p := range paths {
		if !shared.UnderAny(p, out) {
			out = append(out, p)
		}
	}
	return out
}
