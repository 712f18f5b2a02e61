package host

import (
	"fmt"
	"path/filepath"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared"
)

// remedies rewrites the advice of each file denial of a run with the least
// change that grants the path, in this order: the workspace (--workspace
// read or read-write) for a path in the working directory, the operator's
// grant for the skill (skills.grants.NAME.fs_read or fs_write), and the
// ceiling line too when the ceiling is what stands in the way. A path that
// looks like a secret gets no suggestion to grant it.
func (h *Host) remedies(skillName string, vs []shared.Violation) {
	for i, v := range vs {
		if (v.Kind != "fs" && v.Kind != "fs-write") || !filepath.IsAbs(v.Target) {
			continue
		}
		vs[i].Detail = h.remedy(skillName, v.Kind == "fs-write", v.Target)
	}
}

func (h *Host) remedy(skillName string, write bool, path string) string {
	what, field, mode := "outside the grant", "fs_read", grant.WorkspaceRead
	if write {
		what, field, mode = "not writable in the grant", "fs_write", grant.WorkspaceReadWrite
	}
	if grant.LooksSecret(path) {
		return what + "; it looks like a secret (a key, a credential, a password file), so skillhost suggests no way to grant it"
	}
	if cwd, err := grant.Resolve(h.env.Cwd, h.env); err == nil && shared.Under(path, cwd) {
		return fmt.Sprintf("%s; it is in the working directory: run with --workspace %s (or set skills.grants.%s.workspace: %s)", what, mode, skillName, mode)
	}
	dir := filepath.Dir(path)
	ceiling := h.Config.Sandbox.FSRead
	if write {
		ceiling = h.Config.Sandbox.FSWrite
	}
	roots := grant.ResolveAll(ceiling, h.env)
	line := fmt.Sprintf("skills.grants.%s.%s: [%q] in the configuration", skillName, field, dir)
	if !shared.UnderAny(path, roots) {
		return fmt.Sprintf("%s; grant it with %s, and let the ceiling allow it: add %q to sandbox.%s", what, line, dir, field)
	}
	return fmt.Sprintf("%s; grant it with %s", what, line)
}
