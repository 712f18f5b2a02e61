package seatbelt

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// Param is one -D KEY=VALUE definition for sandbox-exec.
type Param struct{ Key, Value string }

// Profile is a rendered SBPL profile and the parameters it references.
// Paths never appear in the text: each is a (param "KEY") bound with -D,
// so quotes, backslashes or odd bytes in a path cannot change the profile.
type Profile struct {
	Text   string
	Params []Param

	read, write []string // canonical paths, for Readable and Writable
}

// Args returns the -D arguments for sandbox-exec.
func (p Profile) Args() []string {
	args := make([]string, 0, 2*len(p.Params))
	for _, prm := range p.Params {
		args = append(args, "-D", prm.Key+"="+prm.Value)
	}
	return args
}

// Readable reports whether the profile lets commands read path (a
// canonical path), beyond the system roots.
func (p Profile) Readable(path string) bool {
	return shared.UnderAny(path, p.read) || shared.UnderAny(path, p.write) || shared.UnderAny(path, systemRead)
}

// Writable reports whether the profile lets commands write path.
func (p Profile) Writable(path string) bool {
	return shared.UnderAny(path, p.write) || slices.Contains(devWrite, path)
}

// Env is what rendering needs besides the request.
type Env struct {
	// RunID tags denials in the unified log.
	RunID string
	// TempDir is the run's private temporary directory.
	TempDir string
	// SocketDir is the plugin's socket directory, always denied; "" omits
	// the rule.
	SocketDir string
	// Canonical maps a path to what Seatbelt sees; nil means Canonical.
	Canonical func(string) string
	// ProxyPort is the loopback port of the run's egress proxy when the
	// grant names its hosts (Grant.Egress): the one place the profile lets
	// the run connect to.
	ProxyPort int
}

// systemRead are the trees programs need to start: binaries, libraries,
// frameworks, dyld's shared cache (under /System/Volumes/Preboot on recent
// macOS), /etc (users, hosts, TLS roots), time zones, and the Command Line
// Tools that /usr/bin/python3 and git are shims for.
var systemRead = []string{
	"/usr", "/bin", "/sbin", "/System", "/Library/Apple", "/Library/Frameworks",
	"/Library/Developer/CommandLineTools", "/private/etc", "/private/var/db/timezone", "/private/var/db/dyld",
}

// devRead and devWrite are the device files commands may use.
var (
	devRead  = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/dtracehelper", "/dev/tty"}
	devWrite = []string{"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/dtracehelper"}
)

// sysctls a normal command reads (CPU and memory facts, OS version, its own
// process); nothing else of the kernel's state.
var sysctls = []string{
	"hw.activecpu", "hw.byteorder", "hw.cachelinesize", "hw.cpufamily", "hw.logicalcpu", "hw.logicalcpu_max",
	"hw.machine", "hw.memsize", "hw.model", "hw.ncpu", "hw.pagesize", "hw.physicalcpu", "hw.physicalcpu_max",
	"kern.argmax", "kern.hostname", "kern.maxfilesperproc", "kern.osproductversion", "kern.osrelease",
	"kern.ostype", "kern.osversion", "kern.secure_kernel", "kern.usrstack64", "kern.version", "sysctl.proc_cputype",
}

var sysctlPrefixes = []string{"hw.optional.", "hw.perflevel", "kern.proc.pid."}

// baseServices are the mach services a normal command needs: user and
// group lookup, logging and preferences. Not a blanket mach-lookup. Reading
// other applications' preferences stays denied: there is no
// user-preference-read rule, which cfprefsd checks on the caller's behalf.
var baseServices = []string{
	"com.apple.system.opendirectoryd.libinfo", "com.apple.system.logger", "com.apple.logd",
	"com.apple.cfprefsd.daemon", "com.apple.cfprefsd.agent",
}

// netServices are what name resolution and TLS verification need when the
// network is on (Go programs verify certificates through trustd). Not
// securityd (com.apple.SecurityServer), which would open the keychain.
var netServices = []string{
	"com.apple.SystemConfiguration.configd", "com.apple.SystemConfiguration.DNSConfiguration",
	"com.apple.dnssd.service", "com.apple.trustd.agent", "com.apple.trustd", "com.apple.ocspd",
	"com.apple.networkd",
}

// Render turns the request's grant into a deny-by-default profile.
// Readable: the system roots above, the skill directory, fs_read, fs_write,
// the interpreter trees and the private temporary directory, plus the
// metadata of their ancestors (so realpath works). Writable: fs_write, the
// temporary directory and the standard devices. $HOME is never readable
// unless granted, and the plugin's socket directory is always denied.
func Render(req shared.Request, env Env) Profile {
	canon := env.Canonical
	if canon == nil {
		canon = Canonical
	}
	var p Profile
	var b strings.Builder
	def := func(key, value string) string {
		p.Params = append(p.Params, Param{key, value})
		return fmt.Sprintf(`(param "%s")`, key)
	}
	list := func(kind string, paths []string, prefix string) []string {
		var clauses []string
		for i, path := range paths {
			clauses = append(clauses, fmt.Sprintf("(%s %s)", kind, def(fmt.Sprintf("%s_%d", prefix, i), path)))
		}
		return clauses
	}
	canonAll := func(paths []string) []string {
		var out []string
		for _, x := range paths {
			if x == "" {
				continue
			}
			if c := canon(x); !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		return out
	}
	skill := canonAll([]string{req.SkillDir})
	read := canonAll(req.Grant.FSRead)
	write := canonAll(req.Grant.FSWrite)
	exec := canonAll(req.ExecPaths)
	tmp := canonAll([]string{env.TempDir})
	p.read = append(append(append([]string{}, skill...), read...), exec...)
	p.write = append(append([]string{}, write...), tmp...)

	fmt.Fprintf(&b, "(version 1)\n(deny default (with message \"skillhost-%s\"))\n", tag(env.RunID))
	b.WriteString("\n;; Processes: run and fork; signal and inspect only processes of this sandbox.\n")
	b.WriteString("(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n")
	b.WriteString("\n;; System facts ordinary programs read.\n")
	writeRule(&b, "allow sysctl-read", append(quoted("sysctl-name", sysctls), quoted("sysctl-name-prefix", sysctlPrefixes)...))
	b.WriteString("\n;; Services: user and group lookup, logging, preferences.\n")
	writeRule(&b, "allow mach-lookup", quoted("global-name", baseServices))
	b.WriteString("(allow ipc-posix-sem)\n(allow ipc-posix-shm-read* (ipc-posix-name-prefix \"apple.cfprefs.\"))\n")

	b.WriteString("\n;; Reading: what programs need to start.\n")
	writeRule(&b, "allow file-read*", append(quoted("subpath", systemRead), quoted("literal", devRead)...))
	b.WriteString("\n;; Reading: the skill, the grant, interpreters, and the run's temporary directory.\n")
	clauses := list("subpath", skill, "SKILL")
	clauses = append(clauses, list("subpath", read, "RO")...)
	clauses = append(clauses, list("subpath", exec, "RX")...)
	writeRule(&b, "allow file-read*", clauses)
	rw := list("subpath", write, "RW")
	rw = append(rw, list("subpath", tmp, "TMP")...)
	writeRule(&b, "allow file-read*", rw)
	b.WriteString("\n;; Metadata of the ancestors of those paths, so realpath and friends work.\n")
	writeRule(&b, "allow file-read-metadata", append([]string{`(literal "/")`}, list("literal", ancestors(append(p.read, p.write...)), "META")...))

	b.WriteString("\n;; Writing: the grant, the run's temporary directory, the standard devices.\n")
	writeRule(&b, "allow file-write*", append(quoted("literal", devWrite), rw...))
	if protected := canonAll(req.Grant.Protected); len(protected) > 0 {
		// Later rules win: these stay read-only inside the writable trees.
		b.WriteString("\n;; Protected paths inside the grant: code there runs later, outside any sandbox.\n")
		writeRule(&b, "deny file-write*", list("subpath", protected, "PROTECTED"))
	}

	switch {
	case req.Grant.ByName():
		// Names are resolved by the proxy, so no resolver service either;
		// TLS verification (trustd) stays for the clients that check the
		// proxy's or the upstream's certificate.
		b.WriteString("\n;; Network: only the run's egress proxy, which allows the named hosts.\n")
		fmt.Fprintf(&b, "(allow network-outbound (remote ip \"localhost:%d\"))\n(allow system-socket)\n", env.ProxyPort)
		writeRule(&b, "allow mach-lookup", quoted("global-name", []string{"com.apple.trustd.agent", "com.apple.trustd"}))
	case req.Grant.Network:
		b.WriteString("\n;; Network: on, plus the services name resolution and TLS need.\n")
		b.WriteString("(allow network-outbound)\n(allow network-inbound)\n(allow network-bind)\n(allow system-socket)\n")
		writeRule(&b, "allow mach-lookup", quoted("global-name", netServices))
	default:
		b.WriteString("\n;; Network: none (denied by default).\n")
	}
	if env.SocketDir != "" {
		sock := def("SOCKET_DIR", canon(env.SocketDir))
		b.WriteString("\n;; The plugin's own socket directory stays closed, whatever the grant says.\n")
		fmt.Fprintf(&b, "(deny file* (subpath %s))\n(deny network-outbound (remote unix-socket (subpath %s)))\n", sock, sock)
	}
	p.Text = b.String()
	return p
}

// quoted makes a (kind "value") clause of each fixed value.
func quoted(kind string, values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = fmt.Sprintf("(%s %q)", kind, v)
	}
	return out
}

// writeRule writes (rule clause...) on several lines, or nothing for no
// clauses: an empty filter list would allow the operation everywhere.
func writeRule(b *strings.Builder, rule string, clauses []string) {
	if len(clauses) == 0 {
		return
	}
	b.WriteString("(" + rule)
	for _, c := range clauses {
		b.WriteString("\n  " + c)
	}
	b.WriteString(")\n")
}

// ancestors lists the directories above paths, without "/" and without the
// paths themselves, in order of first appearance.
func ancestors(paths []string) []string {
	var out []string
	for _, p := range paths {
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			if !slices.Contains(out, d) && !slices.Contains(paths, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// tag keeps only characters that cannot end the log message string.
func tag(s string) string {
	t := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return -1
	}, s)
	if t == "" {
		return "run"
	}
	return t
}

// Command is the argv that runs argv under the profile written to
// profilePath.
func Command(sandboxExec, profilePath string, p Profile, argv []string) []string {
	cmd := []string{sandboxExec, "-f", profilePath}
	cmd = append(cmd, p.Args()...)
	return append(cmd, argv...)
}
