package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared"
)

// remedies rewrites the advice of each file denial of a run with the least
// change that grants the path, in this order: the workspace (--workspace
// read or read-write) for a path in the working directory, the operator's
// grant for the skill (skills.grants.NAME.fs_read or fs_write) of the
// narrowest directory that does, and the ceiling line too when the ceiling
// is what stands in the way. A denied write ("fs-write", or a path that
// does not exist here, which only a write can need, unless it is in /proc
// or /sys, whose contents differ inside a sandbox) is answered with a
// write grant. Never suggested: a secret, /, a system tree or a home
// directory itself; the advice says why instead.
//
// named are the run's arguments (its argv will do), when the caller knows
// them: a path in the working directory that looks like a secret by its
// name alone still gets the workspace remedy when the user named it (or a
// directory holding it), unless it is a real credential (isCredential).
// Without them every path in the working directory counts as named.
func (h *Host) remedies(skillName string, vs []shared.Violation, named ...string) {
	for i, v := range vs {
		if (v.Kind != "fs" && v.Kind != "fs-write") || !filepath.IsAbs(v.Target) {
			continue
		}
		path := filepath.Clean(v.Target)
		vs[i].Detail = h.remedyFor(skillName, v.Kind == "fs-write", path, h.named(path, named))
	}
}

// remedy is the advice for a denied access to path that the user named.
func (h *Host) remedy(skillName string, write bool, path string) string {
	return h.remedyFor(skillName, write, path, true)
}

func (h *Host) remedyFor(skillName string, write bool, path string, named bool) string {
	fi, statErr := os.Lstat(path)
	tree := systemTree(path)
	// What a run sees in the kernel's own trees is not what the host
	// sees (under Landlock /proc is the run's PID namespace), so a path
	// missing here says nothing of what the run tried. Not /dev: scripts
	// make files in /dev/shm.
	kernel := tree == "/proc" || tree == "/sys"
	what := "outside the grant"
	if write {
		what = "not writable in the grant"
	} else if errors.Is(statErr, fs.ErrNotExist) && !kernel {
		// Reading a path that does not exist fails granted or not: the
		// access that was denied can only have been creating it.
		what, write = "outside the grant, and it does not exist here, so only a write grant can help if the script creates it", true
	}
	field, mode, ceiling := "fs_read", grant.WorkspaceRead, h.Config.Sandbox.FSRead
	if write {
		field, mode, ceiling = "fs_write", grant.WorkspaceReadWrite, h.Config.Sandbox.FSWrite
	}
	home, _ := grant.Resolve(h.env.Home, h.env)
	cwd, err := grant.Resolve(h.env.Cwd, h.env)
	inCwd := err == nil && shared.Under(path, cwd) && path != cwd && unsuggestable(cwd, home) == ""
	secret := isCredential(path)
	if !inCwd || !named {
		secret = secret || grant.LooksSecret(path)
	}
	if secret {
		return what + "; it looks like a secret (a key, a credential, a password file), so skillhost suggests no way to grant it"
	}
	if inCwd {
		return fmt.Sprintf("%s; it is in the working directory: run with --workspace %s (or set skills.grants.%s.workspace: %s)", what, mode, skillName, mode)
	}
	if err == nil && path == cwd && !write && unsuggestable(cwd, home) == "" {
		return fmt.Sprintf("%s; it is the working directory: run with --workspace %s (or set skills.grants.%s.workspace: %s)", what, mode, skillName, mode)
	}
	if kernel {
		return fmt.Sprintf("%s; it is in %s, a system tree the kernel fills, which skillhost never suggests granting to a skill: the script has to do without it", what, tree)
	}
	if tree != "" {
		return fmt.Sprintf("%s; it is in %s, a system tree, which skillhost never suggests granting to a skill: have the script use a file in a project directory instead", what, tree)
	}
	target := filepath.Dir(path)
	if statErr == nil && fi.IsDir() && !write {
		target = path // a directory read is granted by itself
	}
	if why := unsuggestable(target, home); why != "" {
		// Its directory is too much to hand over; an existing file can
		// still be read on its own.
		if write || statErr != nil || !fi.Mode().IsRegular() {
			return fmt.Sprintf("%s; it lies directly in %s, which skillhost never suggests granting (%s): have the script use a file in a directory of its own", what, target, why)
		}
		target = path
	}
	line := fmt.Sprintf("skills.grants.%s.%s: [%q] in the configuration", skillName, field, target)
	if !shared.UnderAny(target, grant.ResolveAll(ceiling, h.env)) {
		return fmt.Sprintf("%s; grant it with %s, and let the ceiling allow it: add %q to sandbox.%s", what, line, target, field)
	}
	return fmt.Sprintf("%s; grant it with %s", what, line)
}

// named reports whether path is one of args, or beneath one (a directory
// the user handed the run, other than the working directory itself),
// relative ones taken in the working directory; with no args, true.
func (h *Host) named(path string, args []string) bool {
	if len(args) == 0 {
		return true
	}
	cwd, err := grant.Resolve(h.env.Cwd, h.env)
	if err != nil {
		return false
	}
	for _, a := range args {
		a, ok := argPath(a, cwd)
		if !ok {
			continue
		}
		if a != cwd && shared.Under(path, a) {
			return true
		}
	}
	return false
}

// argPath is the path an argument names, relative ones taken in dir:
// --flag=value names value, and a bare -flag or an empty argument none.
func argPath(arg, dir string) (string, bool) {
	if strings.HasPrefix(arg, "-") {
		_, v, ok := strings.Cut(arg, "=")
		if !ok {
			return "", false
		}
		arg = v
	}
	if arg == "" {
		return "", false
	}
	if !filepath.IsAbs(arg) {
		arg = filepath.Join(dir, arg)
	}
	return filepath.Clean(arg), true
}

// isCredential reports whether path is a real credential, never offered
// even when the user names it: anything under .ssh or .gnupg, an SSH
// private key, key material (*.pem, *.key, *.p12, *.pfx, *.keystore), an
// environment file (.env, .env.local; not a template such as
// .env.example) and the password files .netrc, .pgpass and
// .git-credentials.
func isCredential(path string) bool {
	for _, part := range strings.Split(filepath.Dir(path), "/") {
		if part == ".ssh" || part == ".gnupg" {
			return true
		}
	}
	base := strings.ToLower(filepath.Base(path))
	switch base {
	case ".ssh", ".gnupg", ".env", ".netrc", ".pgpass", ".git-credentials", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519":
		return true
	}
	for _, ext := range []string{".pem", ".key", ".p12", ".pfx", ".keystore"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(base, ".env."); ok {
		switch rest {
		case "example", "sample", "template", "dist":
			return false
		}
		return true
	}
	return false
}

// systemTree returns the system tree path lies in ("/etc"), or "". No
// skill is ever advised to be granted one.
func systemTree(path string) string {
	for _, t := range []string{"/etc", "/usr", "/dev", "/proc", "/sys"} {
		if shared.Under(path, t) {
			return t
		}
	}
	return ""
}

// unsuggestable says why dir may not be suggested as a grant, or "": /,
// a system tree or a system directory's root, a home directory (or
// /home) itself.
func unsuggestable(dir, home string) string {
	switch {
	case dir == "/":
		return "the root of the file system"
	case systemTree(dir) != "":
		return "a system tree"
	case dir == "/bin" || dir == "/sbin" || dir == "/boot" || dir == "/var" || filepath.Dir(dir) == "/" && strings.HasPrefix(dir, "/lib"):
		return "a system directory"
	case dir == home || dir == "/root" || dir == "/home" || filepath.Dir(dir) == "/home" || filepath.Dir(dir) == "/Users":
		return "a home directory, which holds ~/.ssh and the shell's start-up files"
	case home != "" && shared.Under(home, dir):
		return "it holds the home directory"
	}
	return ""
}
