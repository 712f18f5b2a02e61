package landlock

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
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

// defaultTmpSize bounds the view's /tmp when the request sets no memory
// limit (tmpfs pages are memory).
const defaultTmpSize = 1 << 30

// Env is what Build needs to know about the machine and the run.
type Env struct {
	// ABI is the kernel's effective Landlock ABI.
	ABI int
	// TempDir is the run's private temporary directory (writable).
	TempDir string
	// Root reports whether scripts run as root (capabilities are dropped).
	Root bool
	// View builds the run's filesystem view; TempDir is then confiner.ViewTmp.
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
func Build(req shared.Request, env Env) confiner.Policy {
	if env.Stat == nil {
		env.Stat = os.Stat
	}
	// Most paths are looked at twice (for Landlock and for the view).
	env.Stat = memoStat(env.Stat)
	if env.Glob == nil {
		env.Glob = filepath.Glob
	}
	// A grant by name gives no direct network: the run reaches only its
	// proxy (Egress).
	p := confiner.Policy{ABI: env.ABI, Network: req.Grant.Network && req.Grant.Egress == nil, Limits: confiner.Limits(req.Limits), DropCaps: env.Root}
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

// memoStat is stat answering each path once.
func memoStat(stat func(string) (os.FileInfo, error)) func(string) (os.FileInfo, error) {
	type answer struct {
		fi  os.FileInfo
		err error
	}
	seen := map[string]answer{}
	return func(p string) (os.FileInfo, error) {
		a, ok := seen[p]
		if !ok {
			a.fi, a.err = stat(p)
			seen[p] = a
		}
		return a.fi, a.err
	}
}

func dedupe(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// layoutView lays out the view of req: every readable path read-only, every
// write grant writable, protected paths inside write grants read-only
// again, in mount order. A path beneath another of the same kind adds
// nothing and is dropped; a writable one beneath a read-only one is kept
// (it is bound over it); a read-only one beneath a writable one is dropped
// too, since the grant lets the script write it.
func layoutView(req shared.Request, ro []string, env Env) *confiner.View {
	v := &confiner.View{TmpSize: defaultTmpSize, Dir: req.Dir}
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
		v.Binds = append(v.Binds, confiner.Bind{Path: r, System: system[r]})
	}
	for _, w := range writable {
		b := confiner.Bind{Path: w, Write: true}
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
			v.Binds = append(v.Binds, confiner.Bind{Path: p, Protect: true})
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
