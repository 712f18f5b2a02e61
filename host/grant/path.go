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
	return realpath(path)
}

func realpath(p string) (string, error) {
	resolved := "/"
	rest := strings.Split(p, "/")
	links := 0
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
					return "", fmt.Errorf("%s: %s does not exist, so the .. after it cannot be resolved", p, next)
				}
			}
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, nil
}

// clampAll resolves the declared paths of one kind and keeps those under a
// resolved ceiling root, in declaration order without duplicates.
func clampAll(field string, declared, ceiling []string, env Env) ([]string, []string) {
	var warnings []string
	var roots []string
	for _, r := range ceiling {
		rr, err := Resolve(r, env)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("sandbox.%s ceiling entry %q: %v; ignored", field, r, err))
			continue
		}
		roots = append(roots, rr)
	}
	var out []string
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
