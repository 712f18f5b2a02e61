package grant

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// maxSymlinks matches the kernel's limit on links followed in one lookup.
const maxSymlinks = 40

// Resolve expands ~ and makes path absolute against env.Cwd, then resolves
// symlinks the way the kernel would: through the deepest existing ancestor,
// with the components that do not exist yet appended as written. A dangling
// symlink resolves to where it points, so a path that does not exist yet
// cannot smuggle a write outside the directory it seems to be in.
func Resolve(path string, env Env) (string, error) {
	if path == "" {
		return "", errors.New("empty path")
	}
	if strings.HasPrefix(path, "~") {
		rest := path[1:]
		if rest != "" && rest[0] != '/' {
			return "", fmt.Errorf("%s: ~user paths are not supported", path)
		}
		if env.Home == "" {
			return "", fmt.Errorf("%s: no home directory to expand ~", path)
		}
		path = env.Home + rest
	}
	if !filepath.IsAbs(path) {
		if env.Cwd == "" {
			return "", fmt.Errorf("%s: relative path and no working directory", path)
		}
		path = env.Cwd + "/" + path
	}
	resolved, _, err := realpath(path)
	return resolved, err
}

// resolveTracked is Resolve that also lists the symlinks it went through,
// by the path of the link itself.
func resolveTracked(path string, env Env) (string, []string, error) {
	if _, err := Resolve(path, env); err != nil {
		return "", nil, err
	}
	if strings.HasPrefix(path, "~") {
		path = env.Home + path[1:]
	}
	if !filepath.IsAbs(path) {
		path = env.Cwd + "/" + path
	}
	return realpath(path)
}

func realpath(p string) (string, []string, error) {
	var links []string
	resolved := "/"
	rest := strings.Split(p, "/")
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Not there (or not visible to us, which is the same for a
			// process running as us): the rest is taken as written. A ".."
			// after a missing directory cannot be resolved (the kernel
			// fails there too); cleaning it away as text would let
			// x/missing/../link stand for the unresolved symlink x/link.
			for _, r := range rest {
				if r == ".." {
					return "", nil, fmt.Errorf("%s: %s does not exist, so the .. after it cannot be resolved", p, next)
				}
			}
			return filepath.Join(append([]string{next}, rest...)...), links, nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links = append(links, next); len(links) > maxSymlinks {
			return "", nil, fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, links, nil
}

// ceilingRoots resolves the ceiling's roots once, dropping (with a warning)
// those that cannot be resolved or pass through a symlink in a writable
// root: a script with write access there could have made or changed that
// link in an earlier run, turning the root into any directory it likes for
// every run after.
func ceilingRoots(field string, ceiling, writable []string, env Env) ([]string, []string) {
	var warnings, roots []string
	for _, r := range ceiling {
		rr, links, err := resolveTracked(r, env)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("sandbox.%s ceiling entry %q: %v; ignored", field, r, err))
			continue
		}
		if i := slices.IndexFunc(links, func(l string) bool { return shared.UnderAny(l, writable) }); i >= 0 {
			warnings = append(warnings, fmt.Sprintf("sandbox.%s ceiling entry %q: it passes through the symlink %s, which lies in the writable ceiling %q, so a script could have changed it; ignored (name the real directory instead)", field, r, links[i], writable))
			continue
		}
		roots = append(roots, rr)
	}
	return roots, warnings
}

// clampTo resolves the declared paths and keeps those under one of roots,
// the resolved ceiling, in declaration order without duplicates; ceiling
// is the ceiling as written, for warnings.
func clampTo(field string, declared, roots, ceiling []string, env Env) ([]string, []string) {
	var out, warnings []string
	for _, p := range declared {
		rp, err := Resolve(p, env)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s %q: %v; dropped", field, p, err))
			continue
		}
		if !shared.UnderAny(rp, roots) {
			shown := rp
			if rp != p {
				shown = fmt.Sprintf("%s (resolves to %s)", p, rp)
			}
			warnings = append(warnings, fmt.Sprintf("%s %s is outside the ceiling sandbox.%s %q; dropped", field, shown, field, ceiling))
			continue
		}
		if !slices.Contains(out, rp) {
			out = append(out, rp)
		}
	}
	return out, warnings
}

// WritableRoots resolves the write ceiling's roots as they are now, for
// checking the symlinks other roots pass through.
func WritableRoots(ceiling []string, env Env) []string { return ResolveAll(ceiling, env) }

// ResolveAll resolves each of paths (see Resolve) as it is now, leaving
// out those that cannot be.
func ResolveAll(paths []string, env Env) []string {
	var out []string
	for _, r := range paths {
		if rr, err := Resolve(r, env); err == nil {
			out = append(out, rr)
		}
	}
	return out
}

// ReadInsideWrite lists the read ceiling roots that lie inside a write
// ceiling root: scripts may change what they hold.
func ReadInsideWrite(c Ceiling, env Env) []string {
	writable := WritableRoots(c.FSWrite, env)
	var out []string
	for _, r := range c.FSRead {
		rr, err := Resolve(r, env)
		if err != nil {
			continue
		}
		// Where it points now, or where it is written to be: a symlink in
		// a writable root may point anywhere by the next run.
		lexical := r
		if strings.HasPrefix(r, "~") {
			lexical = env.Home + r[1:]
		} else if !filepath.IsAbs(r) {
			lexical = filepath.Join(env.Cwd, r)
		}
		parent, perr := Resolve(filepath.Dir(filepath.Clean(lexical)), env)
		if shared.UnderAny(rr, writable) || (perr == nil && shared.UnderAny(filepath.Join(parent, filepath.Base(lexical)), writable)) {
			out = append(out, r)
		}
	}
	return out
}
