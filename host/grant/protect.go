package grant

import (
	"path/filepath"
	"slices"

	"github.com/skillhost/skillhost/shared"
)

// ProtectedNames are the paths, relative to a write grant's root, whose
// contents something runs later outside any sandbox: version control hooks
// and configuration (core.hooksPath, filters), shell start-up files, SSH
// settings, and the settings of agents and editors that start programs.
var ProtectedNames = []string{
	".git/hooks", ".git/config", ".gitmodules",
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv",
	".ssh", ".mcp.json", ".claude", ".vscode", ".idea",
}

// Protection is what stays read-only inside a grant's writable trees.
type Protection struct {
	// Existing are protected paths that exist: a backend binds them
	// read-only over the writable tree (shared.Grant.Protected).
	Existing []string
	// Missing are protected paths that do not exist yet: the host checks
	// after the run that none was created, and moves aside any that was.
	Missing []string
}

// Protect lists the protected paths inside g's write grant: ProtectedNames
// under each write root, and every skill root (skillRoots, resolved) that
// lies inside one; exceptions (resolved paths the operator listed in
// sandbox.unprotected) and what lies beneath them are left writable.
// exists reports whether a path exists (os.Lstat in production).
func Protect(g Grant, skillRoots, exceptions []string, exists func(string) bool) Protection {
	var p Protection
	add := func(path string, mustExist bool) {
		if shared.UnderAny(path, exceptions) || slices.Contains(p.Existing, path) || slices.Contains(p.Missing, path) {
			return
		}
		switch {
		case exists(path):
			p.Existing = append(p.Existing, path)
		case !mustExist:
			p.Missing = append(p.Missing, path)
		}
	}
	for _, w := range g.FSWrite {
		for _, name := range ProtectedNames {
			add(filepath.Join(w, filepath.FromSlash(name)), false)
		}
		for _, r := range skillRoots {
			if shared.Under(r, w) {
				add(r, true)
			}
		}
	}
	slices.Sort(p.Existing)
	slices.Sort(p.Missing)
	return p
}
