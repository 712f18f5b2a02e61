package landlock

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// maxViolations bounds the list reported for one run.
const maxViolations = 50

var (
	deniedRe   = regexp.MustCompile(`Permission denied|Operation not permitted|\[Errno (1|13)\]`)
	pathRe     = regexp.MustCompile(`(^|[\s'"(:=])(/[^\s'"():,]+)`)
	libRe      = regexp.MustCompile(`error while loading shared libraries: (\S+): cannot open shared object file: Permission denied`)
	netRe      = regexp.MustCompile(`(?i)\b(socket|connect|bind|sendto|sendmsg|getaddrinfo|urlopen|name resolution|name or service)\b`)
	signalRe   = regexp.MustCompile(`kill: \(?(\d+)\)?`)
	forkRe     = regexp.MustCompile(`(fork|retry|clone): Resource temporarily unavailable|Cannot allocate memory|can't start new thread`)
	fsizeRe    = regexp.MustCompile(`File size limit exceeded|File too large`)
	ptraceRe   = regexp.MustCompile(`(?i)ptrace`)
	interpHint = "if scripts need it (an interpreter or its libraries), add its tree to sandbox.interpreters (read and execute only)"
)

// Violations reads a run's output for the marks sandbox denials leave:
// EACCES and EPERM messages naming a path the policy does not grant
// ("fs" outside the grant, "fs-write" where only reading is granted),
// socket errors with the network off, refused signals and exhausted
// limits. Paths in argv (the interpreter and the script, which prefix
// their own error messages) are not reported. The output is
// attacker-controlled, so this is a diagnostic for humans, never a
// security decision.
func Violations(output string, p Policy, argv []string) []shared.Violation {
	var out []shared.Violation
	seen := map[string]bool{}
	add := func(v shared.Violation) {
		key := v.Kind + "\x00" + v.Target
		if seen[key] || len(out) >= maxViolations {
			return
		}
		seen[key] = true
		out = append(out, v)
	}
	for _, line := range strings.Split(output, "\n") {
		if m := libRe.FindStringSubmatch(line); m != nil {
			add(shared.Violation{Kind: "fs-read", Target: m[1], Detail: "a shared library is not readable in the sandbox; " + interpHint})
			continue
		}
		if forkRe.MatchString(line) && p.Limits.Processes > 0 {
			add(shared.Violation{Kind: "limit", Target: "processes", Detail: fmt.Sprintf("process or memory limit reached (sandbox.limits: processes %d, memory %d bytes)", p.Limits.Processes, p.Limits.Memory)})
			continue
		}
		if fsizeRe.MatchString(line) && p.Limits.FileSize > 0 {
			add(shared.Violation{Kind: "limit", Target: "file_size", Detail: fmt.Sprintf("file size limit reached (sandbox.limits.file_size %d bytes)", p.Limits.FileSize)})
			continue
		}
		if !deniedRe.MatchString(line) {
			continue
		}
		switch {
		case signalRe.MatchString(line):
			add(shared.Violation{Kind: "signal", Target: signalRe.FindStringSubmatch(line)[1], Detail: "signals may only reach processes of the same run"})
			continue
		case ptraceRe.MatchString(line):
			add(shared.Violation{Kind: "ptrace", Detail: "tracing other processes is not allowed"})
			continue
		case !p.Network && (netRe.MatchString(line) || strings.Contains(line, "/dev/tcp/") || strings.Contains(line, "/dev/udp/")):
			add(shared.Violation{Kind: "network", Detail: "the grant has no network: " + strings.TrimSpace(line)})
			continue
		}
		for _, m := range pathRe.FindAllStringSubmatch(line, -1) {
			path := filepath.Clean(m[2])
			switch {
			case slices.Contains(argv, path):
			case !p.Readable(path):
				add(shared.Violation{Kind: "fs", Target: path, Detail: "outside the grant; add it to the skill's fs_read or fs_write, or, " + interpHint})
			case !p.Writable(path):
				add(shared.Violation{Kind: "fs-write", Target: path, Detail: "readable but not writable; writes need the skill's fs_write"})
			}
		}
	}
	return out
}

// explainSetup adds a remedy to a start-up failure, typically an
// interpreter outside the system directories that the sandbox cannot read
// (a pyenv shim under $HOME).
func explainSetup(err error, p Policy, req shared.Request) error {
	msg := err.Error()
	if !strings.Contains(msg, "permission denied") || len(req.Argv) == 0 {
		return err
	}
	prog := req.Argv[0]
	if p.Readable(prog) {
		return err
	}
	return fmt.Errorf("%w: the sandbox does not let scripts read or execute %s; add %s to sandbox.interpreters (read and execute only), "+
		"or use an interpreter under /usr", err, prog, suggestRoot(prog, home(req.Env)))
}

// suggestRoot proposes the tree to admit for path: the top directory under
// $HOME it lives in (~/.pyenv for a pyenv shim), else its directory.
func suggestRoot(path, home string) string {
	if home != "" && strings.HasPrefix(path, home+"/") {
		first, _, _ := strings.Cut(strings.TrimPrefix(path, home+"/"), "/")
		return filepath.Join(home, first)
	}
	return filepath.Dir(path)
}

func home(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	return ""
}
