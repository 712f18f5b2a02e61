// Package denials reads a sandboxed command's output for the marks that
// sandbox denials leave, so a backend can report them as violations. The
// output is attacker-controlled: this is a diagnostic for humans, never a
// security decision.
package denials

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/skillhost/skillhost/shared"
)

// Grant answers what the sandbox lets a command read and write.
type Grant interface {
	Readable(path string) bool
	Writable(path string) bool
}

// Options describe the run whose output is scanned.
type Options struct {
	// Network is whether the grant allowed the network.
	Network bool
	// Limits are the resource limits that applied.
	Limits shared.Limits
	// Ignore lists paths never reported: the interpreter and the script,
	// which prefix their own error messages.
	Ignore []string
	// Dir is the command's working directory: a relative path in a
	// message is reported as the absolute path it names there.
	Dir string
}

// Max bounds the violations reported for one run.
const Max = 50

// InterpreterHint tells users how to admit an interpreter tree.
const InterpreterHint = "if scripts need it (an interpreter or its libraries), add its tree to sandbox.interpreters (read and execute only)"

// The expressions compile on first use: every process of a plugin binary
// imports this package, and the supervisors it re-executes as never use it.
var (
	// EROFS is what a write outside the grant meets where the sandbox
	// makes the rest of the file system a read-only mount.
	deniedRe = lazyRegexp(`Permission denied|Operation not permitted|Read-only file system|\[Errno (1|13|30)\]`)
	// ENOENT is what a path outside the grant meets where the sandbox
	// builds the run's file system from the grant: it does not exist
	// there (dash says "Directory nonexistent" when it cannot create a
	// file there). Only a path the grant does not cover counts.
	missingRe = lazyRegexp(`No such file|Directory nonexistent|\[Errno 2\]`)
	// writeRe is a message that shows the denied access was a write:
	// EROFS only ever answers one, and these are the words tools use when
	// they fail to create or change a file.
	writeRe = lazyRegexp(`Read-only file system|\[Errno 30\]|Directory nonexistent|cannot (create|touch|remove|move|overwrite|make)\b`)
	pathRe  = lazyRegexp(`(^|[\s'"(:=])(/[^\s'"():,]+)`)
	// relRe finds a relative path where tools put the file they failed
	// on: Python's quoted name after the error ("...: 'form.pdf'") and
	// coreutils' "cat: form.pdf: No such file or directory".
	relRe    = lazyRegexp(`(?:\]\s[^:]*:\s'([^'/\s][^']*)'|^[\w.-]+:\s(?:[^:]*:\s)?(?:cannot \w+ '?)?([^/\s:'][^\s:']*)'?:\s(?:No such file|Permission denied|Read-only file system|Directory nonexistent))`)
	libRe    = lazyRegexp(`error while loading shared libraries: (\S+): cannot open shared object file: Permission denied`)
	netRe    = lazyRegexp(`(?i)\b(socket|connect|bind|sendto|sendmsg|getaddrinfo|urlopen|name resolution|name or service)\b`)
	signalRe = lazyRegexp(`kill: \(?(\d+)\)?`)
	forkRe   = lazyRegexp(`(fork|retry|clone): Resource temporarily unavailable|Cannot allocate memory|can't start new thread`)
	fsizeRe  = lazyRegexp(`File size limit exceeded|File too large`)
	ptraceRe = lazyRegexp(`(?i)ptrace`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Scan returns the violations the output shows: EACCES, EPERM and EROFS
// messages naming a path the grant does not cover ("fs-write" for a write,
// whether the path is outside the grant or only readable there, "fs" for
// any other access outside the grant), socket errors with the network off,
// refused signals and ptrace, and exhausted limits.
func Scan(output string, g Grant, opts Options) []shared.Violation {
	var out []shared.Violation
	seen := map[string]bool{}
	add := func(v shared.Violation) {
		key := v.Kind + "\x00" + v.Target
		if seen[key] || len(out) >= Max {
			return
		}
		seen[key] = true
		out = append(out, v)
	}
	l := opts.Limits
	for _, line := range strings.Split(output, "\n") {
		if m := libRe().FindStringSubmatch(line); m != nil {
			add(shared.Violation{Kind: "fs-read", Target: m[1], Detail: "a shared library is not readable in the sandbox; " + InterpreterHint})
			continue
		}
		if forkRe().MatchString(line) && l.Processes > 0 {
			add(shared.Violation{Kind: "limit", Target: "processes", Detail: fmt.Sprintf("process or memory limit reached (sandbox.limits: processes %d, memory %d bytes)", l.Processes, l.Memory)})
			continue
		}
		if fsizeRe().MatchString(line) && l.FileSize > 0 {
			add(shared.Violation{Kind: "limit", Target: "file_size", Detail: fmt.Sprintf("file size limit reached (sandbox.limits.file_size %d bytes)", l.FileSize)})
			continue
		}
		if !deniedRe().MatchString(line) {
			if missingRe().MatchString(line) {
				for _, path := range paths(line, opts.Dir) {
					if !slices.Contains(opts.Ignore, path) && !g.Readable(path) {
						add(outside(path, writeRe().MatchString(line)))
					}
				}
			}
			continue
		}
		if m := signalRe().FindStringSubmatch(line); m != nil {
			add(shared.Violation{Kind: "signal", Target: m[1], Detail: "signals may only reach processes of the same run"})
			continue
		}
		switch {
		case ptraceRe().MatchString(line):
			add(shared.Violation{Kind: "ptrace", Detail: "tracing other processes is not allowed"})
			continue
		case !opts.Network && (netRe().MatchString(line) || strings.Contains(line, "/dev/tcp/") || strings.Contains(line, "/dev/udp/")):
			// The script's words are quoted as data, apart from ours.
			add(shared.Violation{Kind: "network", Detail: "the grant has no network; the script printed " + strconv.Quote(strings.TrimSpace(line))})
			continue
		}
		for _, path := range paths(line, opts.Dir) {
			switch {
			case slices.Contains(opts.Ignore, path):
			case !g.Readable(path):
				add(outside(path, writeRe().MatchString(line)))
			case !g.Writable(path):
				add(shared.Violation{Kind: "fs-write", Target: path, Detail: "readable but not writable; writes need the skill's fs_write"})
			}
		}
	}
	return out
}

// outside is the violation of an access to path outside the grant: a
// write needs fs_write, anything else fs_read (or an interpreter tree).
func outside(path string, write bool) shared.Violation {
	if write {
		return shared.Violation{Kind: "fs-write", Target: path, Detail: "a write outside the grant; writes need the skill's fs_write"}
	}
	return shared.Violation{Kind: "fs", Target: path, Detail: "outside the grant; add it to the skill's fs_read or fs_write, or, " + InterpreterHint}
}

// paths lists the absolute paths a message line names, and its relative
// ones (a file a tool failed on) resolved against dir, when dir is set.
func paths(line, dir string) []string {
	var out []string
	for _, m := range pathRe().FindAllStringSubmatch(line, -1) {
		out = append(out, filepath.Clean(m[2]))
	}
	if dir != "" && filepath.IsAbs(dir) {
		for _, m := range relRe().FindAllStringSubmatch(line, -1) {
			rel := m[1] + m[2]
			if rel != "" && rel != "." && rel != ".." {
				out = append(out, filepath.Join(dir, rel))
			}
		}
	}
	return out
}

// SuggestRoot proposes the tree to admit for path: the top directory under
// home it lives in (~/.pyenv for a pyenv shim), else its directory.
func SuggestRoot(path, home string) string {
	if home != "" && strings.HasPrefix(path, home+"/") {
		first, _, _ := strings.Cut(strings.TrimPrefix(path, home+"/"), "/")
		return filepath.Join(home, first)
	}
	return filepath.Dir(path)
}

// Home returns HOME from an environment list, or "".
func Home(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	return ""
}

// Launcher returns the part of argv that starts the script: everything up
// to and including the first argument inside skillDir (the interpreter, its
// options and the script), whose paths prefix their own error messages and
// so are never reported. The script's own arguments come after it: a
// denial naming one of them is a violation like any other. Without an
// argument inside skillDir it is argv[0] alone.
func Launcher(argv []string, skillDir string) []string {
	for i, a := range argv {
		if skillDir != "" && filepath.IsAbs(a) && shared.Under(filepath.Clean(a), skillDir) {
			return argv[:i+1]
		}
	}
	if len(argv) > 0 {
		return argv[:1]
	}
	return nil
}
