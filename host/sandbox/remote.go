package sandbox

import (
	"fmt"
	"path/filepath"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/skilltar"
)

// Where a remote backend is asked to put the skill and the workspace.
const (
	remoteSkillDir     = "/skill"
	remoteWorkspaceDir = "/workspace"
)

// forRemote fills req's Skill, Command and Mounts, the description of the
// run without host paths that a backend whose Info says Remote needs
// (docs/contract.md §11). Local backends never pay for the digest.
func forRemote(req shared.Request) (shared.Request, error) {
	if req.SkillDir == "" {
		return req, fmt.Errorf("a remote backend needs the skill's directory, and the request names none")
	}
	digest, size, err := skilltar.Digest(req.SkillDir)
	if err != nil {
		return req, err
	}
	req.Skill = shared.Skill{Name: filepath.Base(req.SkillDir), Digest: digest, Size: size}
	if req.Command, err = commandOf(req.Argv, req.SkillDir); err != nil {
		return req, err
	}
	req.Mounts = mountsOf(req)
	return req, nil
}

// commandOf finds the skill's script in argv: argv[0] itself, or the first
// argument inside the skill after an interpreter (and its flags).
func commandOf(argv []string, skillDir string) (shared.Command, error) {
	for i, a := range argv {
		if !filepath.IsAbs(a) || !shared.Under(a, skillDir) || a == skillDir {
			continue
		}
		rel, err := filepath.Rel(skillDir, a)
		if err != nil {
			break
		}
		c := shared.Command{Script: filepath.ToSlash(rel), Args: append([]string{}, argv[i+1:]...)}
		if i > 0 {
			c.Interpreter = filepath.Base(argv[0])
		}
		return c, nil
	}
	return shared.Command{}, fmt.Errorf("a remote backend runs a script of the skill, and no argument of %q is inside %s", argv, skillDir)
}

// mountsOf maps the grant: the skill read-only at /skill, the working
// directory at /workspace when it is granted (writable if it is under a
// write grant), and every other granted path as itself.
func mountsOf(req shared.Request) []shared.Mount {
	ms := []shared.Mount{{Role: shared.MountSkill, Logical: remoteSkillDir, HostPath: req.SkillDir}}
	workspace := ""
	if req.Dir != "" && req.Dir != req.SkillDir {
		switch {
		case shared.UnderAny(req.Dir, req.Grant.FSWrite):
			ms = append(ms, shared.Mount{Role: shared.MountWorkspace, Logical: remoteWorkspaceDir, HostPath: req.Dir, Writable: true})
			workspace = req.Dir
		case shared.UnderAny(req.Dir, req.Grant.FSRead):
			ms = append(ms, shared.Mount{Role: shared.MountWorkspace, Logical: remoteWorkspaceDir, HostPath: req.Dir})
			workspace = req.Dir
		}
	}
	add := func(p string, writable bool) {
		if p == workspace || shared.Under(p, req.SkillDir) {
			return
		}
		for i, m := range ms {
			if m.HostPath == p {
				ms[i].Writable = ms[i].Writable || writable
				return
			}
		}
		ms = append(ms, shared.Mount{Role: shared.MountPath, Logical: p, HostPath: p, Writable: writable})
	}
	for _, p := range req.Grant.FSWrite {
		add(p, true)
	}
	for _, p := range req.Grant.FSRead {
		add(p, false)
	}
	return ms
}
