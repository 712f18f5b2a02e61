package changeset

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// Protected is one entry of the policy: a Name matches a path component at
// any depth (".git", ".bashrc"), or, with a slash, a run of components
// (".github/copilot-instructions.md"); Why says what would run it.
type Protected struct {
	Name string
	Why  string
}

// Defaults are the paths no run changes, at any depth of any write grant:
// each is read later, outside any sandbox, by a program that runs code or
// instructions from it. sandbox.protected adds to them, sandbox.unprotected
// takes from them (docs/sandbox.md).
var Defaults = []Protected{
	{".git", "git runs hooks and commands named in a repository's configuration, and follows .git files and commondir to others"},
	{".gitconfig", "git's global configuration: commands it names (core.fsmonitor, aliases, hooks) run in every repository"},
	{".config/git", "git's global configuration: commands it names run in every repository"},
	{".hg", "Mercurial runs hooks named in a repository's configuration"},
	{".husky", "a git hook manager's hooks run at the next commit"},
	{".githooks", "a common core.hooksPath: hooks run at the next commit"},
	{".pre-commit-config.yaml", "pre-commit runs the hooks it names at the next commit"},
	{".envrc", "direnv runs it on entering the directory"},
	{".ssh", "SSH keys, authorized keys and client configuration"},
	{".bashrc", "a shell runs it at start-up"},
	{".bash_profile", "a shell runs it at start-up"},
	{".bash_login", "a shell runs it at start-up"},
	{".bash_logout", "a shell runs it at exit"},
	{".profile", "a shell runs it at start-up"},
	{".zshrc", "a shell runs it at start-up"},
	{".zshenv", "a shell runs it at start-up"},
	{".zprofile", "a shell runs it at start-up"},
	{".zlogin", "a shell runs it at start-up"},
	{".zlogout", "a shell runs it at exit"},
	{".mcp.json", "a coding agent starts the MCP servers it names"},
	{".claude", "a coding agent's settings: hooks, MCP servers, commands"},
	{".cursor", "an editor's agent settings and MCP servers"},
	{".gemini", "a coding agent's settings and MCP servers"},
	{".codex", "a coding agent's settings"},
	{".continue", "a coding agent's settings"},
	{".zed", "an editor's tasks and settings"},
	{".vscode", "an editor's tasks, launch configurations and settings"},
	{".idea", "an IDE's run configurations and settings"},
	{".devcontainer", "a dev container's commands run on opening the folder"},
	{"CLAUDE.md", "instructions a coding agent obeys"},
	{"AGENTS.md", "instructions a coding agent obeys"},
	{".github/copilot-instructions.md", "instructions a coding agent obeys"},
}

// Policy judges changes. Its zero value refuses only what is never
// applied (device nodes, FIFOs, sockets, set-uid and set-gid bits,
// symbolic links that point out of their grant).
type Policy struct {
	// Names are the protected names (Defaults, with the operator's
	// additions and removals).
	Names []Protected
	// Trees are absolute paths protected with all they hold: skill roots,
	// a repository's core.hooksPath, the operator's absolute entries.
	Trees []Protected
	// Exempt are absolute paths whose changes the names and trees above do
	// not stop (sandbox.unprotected's absolute entries).
	Exempt []string
	// Hooks, if set, returns the hook directories (absolute) that git uses
	// for the repository whose work tree dir is, when dir holds one.
	Hooks func(dir string) []string
}

// New is the default policy with the operator's additions (a name, a
// relative path, or an absolute path protected with what it holds) and
// removals (a name drops it from the defaults; an absolute path exempts
// what lies beneath it).
func New(protected, unprotected []string) Policy {
	var p Policy
	for _, d := range Defaults {
		if !slices.Contains(unprotected, d.Name) {
			p.Names = append(p.Names, d)
		}
	}
	for _, e := range protected {
		if filepath.IsAbs(e) {
			p.Trees = append(p.Trees, Protected{filepath.Clean(e), "listed in sandbox.protected"})
		} else if e = strings.Trim(filepath.ToSlash(e), "/"); e != "" {
			p.Names = append(p.Names, Protected{e, "listed in sandbox.protected"})
		}
	}
	for _, e := range unprotected {
		if filepath.IsAbs(e) {
			p.Exempt = append(p.Exempt, filepath.Clean(e))
		}
	}
	return p
}

// Judge says why c may not be applied, or "" when it may. named, when
// set, is the user naming c's path on purpose (`skillhost changes apply
// RUN PATH`): the protected names and trees then give way, the rules on
// what is never applied do not.
func (p Policy) Judge(c Change, named bool) string {
	if why := never(c); why != "" {
		return why
	}
	if named || shared.UnderAny(c.Path, p.Exempt) {
		return ""
	}
	rel := c.Rel()
	parts := strings.Split(rel, "/")
	for _, n := range p.Names {
		if matchName(parts, n.Name) {
			return fmt.Sprintf("protected path %s: %s", n.Name, n.Why)
		}
	}
	for _, t := range p.Trees {
		if shared.Under(c.Path, t.Name) {
			return fmt.Sprintf("protected path %s: %s", t.Name, t.Why)
		}
	}
	if p.Hooks != nil {
		// The hooks of every repository this path lies in, up to the root
		// of its grant (and the grant's own repository above it).
		for dir := filepath.Dir(c.Path); ; dir = filepath.Dir(dir) {
			for _, h := range p.Hooks(dir) {
				if shared.Under(c.Path, h) {
					return fmt.Sprintf("protected path %s: the repository's core.hooksPath; git runs hooks from it", h)
				}
			}
			if dir == c.Root || !strings.HasPrefix(dir, c.Root) || dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return ""
}

// never says why c is never applied, whoever asks.
func never(c Change) string {
	switch {
	case c.Kind == Deleted:
		return ""
	case c.Type == TypeOther:
		return "a device node, FIFO or socket: never applied"
	case c.Mode&(modeSetuid|modeSetgid) != 0:
		return "a set-uid or set-gid bit: never applied"
	case c.Type == TypeSymlink:
		target := c.Target
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(c.Path), target)
		}
		if !shared.Under(filepath.Clean(target), c.Root) {
			return fmt.Sprintf("a symbolic link to %s, outside the write grant %s: never applied", c.Target, c.Root)
		}
	}
	return ""
}

// matchName reports whether name (one component, or several joined by
// slashes) occurs in parts as whole components. One component matches
// regardless of case: on a case-insensitive file system .GIT is .git.
func matchName(parts []string, name string) bool {
	want := strings.Split(name, "/")
	for i := 0; i+len(want) <= len(parts); i++ {
		ok := true
		for j, w := range want {
			if !strings.EqualFold(parts[i+j], w) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
