package host

import (
	"fmt"
	"slices"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/skill"
)

// Grant computes the effective grant of s (what it declares plus what the
// operator grants it, clamped) and reports what it dropped.
func (h *Host) Grant(s *skill.Skill) (grant.Grant, []string) {
	g, _, w := h.GrantWith(s, "")
	return g, w
}

// GrantWith is Grant with a workspace mode for this run ("" keeps the
// configured one; grant.WorkspaceNone withdraws it), and the origin of
// every part of the grant.
func (h *Host) GrantWith(s *skill.Skill, workspace string) (grant.Grant, grant.Origins, []string) {
	declared, warnings := grant.FromFrontMatter(s.Declared)
	for i, w := range warnings {
		warnings[i] = fmt.Sprintf("skill %q: %s", s.Name, w)
	}
	op := h.operatorGrant(s).Operator()
	if workspace != "" {
		op.Workspace = workspace
	}
	g, origins, more := grant.ComputeWith(s.Name, declared, op, h.Config.Ceiling(), h.env)
	for _, w := range more {
		warnings = append(warnings, fmt.Sprintf("skill %q: %s", s.Name, w))
	}
	return g, origins, warnings
}

// operatorGrant finds skills.grants for s: by its exact name, else by a
// spelling that differs only in case, -, _ or spaces.
func (h *Host) operatorGrant(s *skill.Skill) config.SkillGrant {
	grants := h.Config.Skills.Grants
	if g, ok := grants[s.Name]; ok {
		return g
	}
	for name, g := range grants {
		if catalog.Fold(name) == catalog.Fold(s.Name) {
			return g
		}
	}
	return config.SkillGrant{}
}

// UnknownGrants lists the skills.grants entries that name no loaded skill:
// a typo there silently grants nothing.
func (h *Host) UnknownGrants() []string {
	var out []string
	for name := range h.Config.Skills.Grants {
		if _, err := h.Catalog.Find(name); err != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
