package host

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/shared"
)

// Grant computes the effective grant of s for a run, with where each part
// came from and what was dropped (each warning naming the skill): what s
// declares plus what the operator grants it, clamped to the ceiling; no
// writing into the skills; the protected paths inside the write grant; and
// no core trust for a skill that lies where runs can write. workspace is the
// run's workspace mode ("" keeps the configured one; grant.WorkspaceNone
// withdraws it); dirs, if any, are the workspace instead of the working
// directory (see RunRequest.WorkspaceDirs).
func (h *Host) Grant(s *skill.Skill, workspace string, dirs ...string) grant.Computed {
	c := h.clampedGrant(s, workspace, dirs)
	skillRoots := h.skillRoots(s)
	exceptions := grant.ResolveAll(h.Config.Sandbox.Unprotected, h.env)
	// Writing into a skill's files is refused outright: one skill could
	// rewrite another, or a trusted one.
	c.Grant.FSWrite = slices.DeleteFunc(c.Grant.FSWrite, func(w string) bool {
		for _, r := range skillRoots {
			if shared.Under(w, r) && !shared.UnderAny(w, exceptions) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("skill %q: fs_write %s lies in the skills at %s; refused (list it in sandbox.unprotected to allow it)", s.Name, w, r))
				return true
			}
		}
		return false
	})
	prot := grant.Protect(c.Grant, skillRoots, exceptions, func(p string) bool {
		_, err := os.Lstat(p)
		return err == nil
	})
	c.Grant.Protected, c.Unborn = prot.Existing, prot.Missing
	h.checkTrustPlace(s, &c)
	return c
}

// clampedGrant is what s declares (as parsed when it was loaded) and what
// the operator grants it, clamped to the ceiling for the working directory
// or each of dirs, before the skills and their places are considered.
func (h *Host) clampedGrant(s *skill.Skill, workspace string, dirs []string) grant.Computed {
	declared := s.Declared
	op := h.operatorGrant(s).Operator()
	if workspace != "" {
		op.Workspace = workspace
	}
	if dir, err := filepath.EvalSymlinks(s.Dir); err == nil {
		declared.Dir = dir
	}
	env := h.env
	if len(dirs) > 0 {
		env.Cwd = dirs[0] // the workspace, and what relative paths mean
	}
	c := grant.ComputeWith(s.Name, declared, op, h.Config.Ceiling(), env)
	for _, extra := range dirs[min(1, len(dirs)):] {
		// Each further workspace directory is granted as the first is.
		env.Cwd = extra
		e := grant.ComputeWith(s.Name, declared, op, h.Config.Ceiling(), env)
		c.Grant.FSRead, c.Grant.FSWrite = mergePaths(c.Grant.FSRead, e.Grant.FSRead), mergePaths(c.Grant.FSWrite, e.Grant.FSWrite)
		for p, from := range e.Origins.FSRead {
			c.Origins.FSRead[p] = mergePaths(c.Origins.FSRead[p], from)
		}
		for p, from := range e.Origins.FSWrite {
			c.Origins.FSWrite[p] = mergePaths(c.Origins.FSWrite[p], from)
		}
		c.Warnings = append(c.Warnings, e.Warnings...)
	}
	var warnings []string
	for _, list := range [][]string{s.DeclaredWarnings, c.Warnings} {
		for _, w := range list {
			warnings = append(warnings, fmt.Sprintf("skill %q: %s", s.Name, w))
		}
	}
	c.Warnings = warnings
	return c
}

// mergePaths appends to a the entries of b it lacks.
func mergePaths(a, b []string) []string {
	for _, p := range b {
		if !slices.Contains(a, p) {
			a = append(a, p)
		}
	}
	return a
}

// skillRoots are the resolved directories that hold skills: the catalog's
// roots and s's own directory.
func (h *Host) skillRoots(s *skill.Skill) []string {
	var out []string
	for _, r := range append(h.Catalog.Roots(), s.Dir) {
		if rr, err := filepath.EvalSymlinks(r); err == nil && !slices.Contains(out, rr) {
			out = append(out, rr)
		}
	}
	return out
}

// checkTrustPlace withdraws an honoured trust: core from a skill whose
// directory lies where runs could have written it.
func (h *Host) checkTrustPlace(s *skill.Skill, c *grant.Computed) {
	if c.Grant.Core() {
		dir, _ := filepath.EvalSymlinks(s.Dir)
		// Even a listed directory loses its trust where a run could have
		// written it, or where whoever controls the working directory
		// could have put it.
		trees := h.writableTrees()
		if cwd, err := filepath.EvalSymlinks(h.env.Cwd); err == nil {
			trees = append(trees, writable{cwd, "the working directory, whoever controls it"})
		}
		if tree, why := writableIn(trees, dir); tree != "" {
			c.Grant.Trust = grant.TrustExternal
			c.Warnings = append(c.Warnings, fmt.Sprintf("skill %q: trust: core is ignored: its directory lies in %s, which runs can write (%s); it runs as external", s.Name, tree, why))
		}
	}
}

// operatorGrant finds skills.grants for s by its exact name. No looser
// match: a skill named PDF must not inherit what the operator granted pdf.
func (h *Host) operatorGrant(s *skill.Skill) config.SkillGrant {
	return h.Config.Skills.Grants[s.Name]
}

// UnknownGrants describes the skills.grants entries that name no loaded
// skill exactly (a typo there silently grants nothing), with the skill
// probably meant.
func (h *Host) UnknownGrants() []string {
	var out []string
	for name := range h.Config.Skills.Grants {
		s, err := h.Catalog.Find(name)
		if err == nil && s.Name == name {
			continue
		}
		msg := fmt.Sprintf("skills.grants.%s names no loaded skill, so it grants nothing", name)
		if err == nil {
			msg += fmt.Sprintf(" (entries match names exactly: did you mean %q?)", s.Name)
		}
		out = append(out, msg)
	}
	slices.Sort(out)
	return out
}

// CeilingWarnings lists the read ceiling roots that lie inside a write
// ceiling root: a script allowed to write there can change what later runs
// read, so such a root deserves a second look.
func (h *Host) CeilingWarnings() []string {
	var out []string
	for _, r := range grant.ReadInsideWrite(h.Config.Ceiling(), h.env) {
		out = append(out, fmt.Sprintf("sandbox.fs_read entry %q lies inside a sandbox.fs_write entry: scripts may change what later runs read there", r))
	}
	return out
}
