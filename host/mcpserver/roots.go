package mcpserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared"
)

// WorkspaceRootsKey is the configuration key naming where a client's
// roots may lie.
const WorkspaceRootsKey = "mcp.workspace_roots"

// systemDirs are never a workspace, nor anything beneath them, whatever
// the allowed roots say: a client root there hands a tool the system's
// configuration or programs. "/" itself is refused separately.
var systemDirs = []string{"/etc", "/usr", "/var"}

// protectedRootNames are the names a client root may neither be nor lie
// inside, at any depth: the first component of each of
// grant.ProtectedNames (.git of .git/hooks), whose contents something runs
// later outside any sandbox.
// They are worked out on first use, not at every program's start-up.
var protectedRootNames = sync.OnceValue(func() []string {
	var out []string
	for _, n := range grant.ProtectedNames {
		first, _, _ := strings.Cut(n, "/")
		if !containsFold(out, first) {
			out = append(out, first)
		}
	}
	return out
})

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// RootPolicy says which client roots may become a workspace.
type RootPolicy struct {
	// Allowed are the directories, resolved, a root must be or lie in.
	Allowed []string
	// Home is the resolved home directory ("" when there is none).
	Home string
	// Unusable are the allowed roots as written that could not be
	// expanded or resolved, with why; they allow nothing.
	Unusable []string
}

// NewRootPolicy resolves allowed (entries as the operator wrote them: ~,
// $VAR and ${VAR} expanded, symlinks resolved) against home. Relative
// entries are refused: a desktop client starts the server anywhere.
func NewRootPolicy(allowed []string, home string, getenv func(string) (string, bool)) RootPolicy {
	var p RootPolicy
	if home != "" {
		if h, err := grant.Resolve(home, grant.Env{Home: home}); err == nil {
			p.Home = h
		}
	}
	env := grant.Env{Home: home}
	for _, a := range allowed {
		expanded, err := expandVars(a, getenv)
		if err == nil && !filepath.IsAbs(expanded) && expanded != "~" && !strings.HasPrefix(expanded, "~/") {
			err = errors.New("not an absolute path (or ~/...)")
		}
		var r string
		if err == nil {
			r, err = grant.Resolve(expanded, env)
		}
		if err != nil {
			p.Unusable = append(p.Unusable, fmt.Sprintf("%s entry %q: %v", WorkspaceRootsKey, a, err))
			continue
		}
		p.Allowed = append(p.Allowed, r)
	}
	return p
}

// expandVars expands $VAR and ${VAR} in p; a variable that is not set is
// an error, never the empty string ($PROJECTS/x must not become /x).
func expandVars(p string, getenv func(string) (string, bool)) (string, error) {
	var missing []string
	out := os.Expand(p, func(name string) string {
		v, ok := getenv(name)
		if !ok || v == "" {
			missing = append(missing, "$"+name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// RootError is a client root refused as a workspace.
type RootError struct {
	Root string // as the client gave it
	// Resolved is where Root leads through symlinks ("" when it could not
	// be resolved).
	Resolved string
	// Rule is the rule that refuses it, Remedy what the user can do.
	Rule, Remedy string
}

func (e *RootError) Error() string {
	shown := e.Root
	if e.Resolved != "" && e.Resolved != e.Root {
		shown = fmt.Sprintf("%s (resolves to %s)", e.Root, e.Resolved)
	}
	return fmt.Sprintf("the client's root %s cannot be the workspace: %s; %s", shown, e.Rule, e.Remedy)
}

// Check returns root resolved through symlinks when it may be a
// workspace, or a *RootError naming the rule that refuses it and the
// remedy. A root is never /, /etc, /usr, /var or beneath them, the home
// directory or above it, one of its hidden directories (~/.ssh,
// ~/.config) or beneath one, nor a protected name (.git, .ssh, .claude:
// grant.ProtectedNames) or inside one at any depth; otherwise it must be
// one of p.Allowed or lie beneath one.
func (p RootPolicy) Check(root string) (string, error) {
	const never = "open a project directory in the client instead (this is refused whatever " + WorkspaceRootsKey + " says)"
	if !filepath.IsAbs(root) {
		return "", &RootError{Root: root, Rule: "it is not an absolute path", Remedy: never}
	}
	r, err := grant.Resolve(root, grant.Env{Home: p.Home})
	if err != nil {
		return "", &RootError{Root: root, Rule: fmt.Sprintf("it cannot be resolved (%v)", err), Remedy: never}
	}
	refuse := func(rule, remedy string) (string, error) {
		return "", &RootError{Root: root, Resolved: r, Rule: rule, Remedy: remedy}
	}
	if r == "/" {
		return refuse("it is the root directory /", never)
	}
	for _, d := range systemDirs {
		if shared.Under(r, d) || resolvedUnder(r, d) {
			return refuse(fmt.Sprintf("it is or lies in the system directory %s", d), never)
		}
	}
	if p.Home != "" && shared.Under(p.Home, r) {
		return refuse(fmt.Sprintf("it is the home directory %s or holds it (its keys and start-up files)", p.Home), never)
	}
	if p.Home != "" && shared.Under(r, p.Home) {
		first, _, _ := strings.Cut(strings.TrimPrefix(r, p.Home+"/"), "/")
		if strings.HasPrefix(first, ".") {
			return refuse(fmt.Sprintf("it is or lies in %s, a hidden directory of the home directory (keys and settings: ~/.ssh, ~/.config, ~/.local)",
				filepath.Join(p.Home, first)), never)
		}
	}
	for _, c := range strings.Split(strings.TrimPrefix(r, "/"), "/") {
		if containsFold(protectedRootNames(), c) {
			return refuse(fmt.Sprintf("it is or lies in a directory named %s, which skillhost protects (its contents run later outside any sandbox)", c), never)
		}
	}
	if !shared.UnderAny(r, p.Allowed) {
		allowed := "none"
		if len(p.Allowed) > 0 {
			allowed = strings.Join(p.Allowed, ", ")
		}
		return refuse(fmt.Sprintf("it is outside the directories %s allows (%s)", WorkspaceRootsKey, allowed),
			fmt.Sprintf("add it, or a directory above it, to %s in the configuration (or $SKILLHOST_MCP__WORKSPACE_ROOTS)", WorkspaceRootsKey))
	}
	return r, nil
}

// resolvedUnder reports whether r lies in dir as dir resolves (/etc is
// /private/etc on macOS).
func resolvedUnder(r, dir string) bool {
	d, err := filepath.EvalSymlinks(dir)
	return err == nil && d != dir && shared.Under(r, d)
}

// clampRoots checks every one of a client's roots (see RootPolicy.Check)
// and returns them resolved, or the first refusal; every refused root is
// logged.
func (s *Server) clampRoots(roots []string) ([]string, error) {
	p := s.rootPolicy()
	out := make([]string, 0, len(roots))
	var first error
	for _, root := range roots {
		r, err := p.Check(root)
		if err != nil {
			s.logger.Warn("refused a client root as the workspace", "root", root, "err", err)
			for _, u := range p.Unusable {
				s.logger.Warn("an allowed workspace root is unusable", "problem", u)
			}
			if first == nil {
				first = err
			}
			continue
		}
		out = append(out, r)
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

// rootPolicy resolves the allowed roots now: a symlink among them may
// have changed since the last call.
func (s *Server) rootPolicy() RootPolicy {
	home := s.opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	allowed := s.opts.WorkspaceRoots
	if allowed == nil {
		allowed = []string{"~"}
	}
	return NewRootPolicy(allowed, home, os.LookupEnv)
}
