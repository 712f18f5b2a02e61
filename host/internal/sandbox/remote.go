package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/skillhost/skillhost/host/internal/safeio"
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
	req.FileLimit = remoteFileLimit
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

// remoteFileLimit caps the bytes of files a remote backend returns per run.
const remoteFileLimit = 64 << 20

// writeBack writes the files a remote backend returned into the host
// counterparts of the request's writable mounts, as it would extract an
// untrusted archive: each path must lie under a writable mount's logical
// path, and is written through an os.Root of the mount's host path, so
// neither ".." nor a symlink in the workspace leads out of it. Each
// mount's root is opened once per run, on its first file, so every file
// goes into the same directory even if its path is replaced meanwhile. A
// file that cannot be written becomes a violation naming it; the others
// are still written. The returned result keeps the files' paths and
// modes, not their data.
//
// With req.Stage set the files go to the stage instead, as a local
// backend's writes would (each mount's FSWrite index names its upper
// layer): the host then judges and applies them like any staged run's, so
// a worker, honest or not, can return nothing the host's policy refuses.
func writeBack(ctx context.Context, req shared.Request, res shared.Result) shared.Result {
	roots := newMountRoots(req.Mounts)
	if req.Stage != "" {
		roots.stage = func(m shared.Mount) (string, error) {
			i := slices.Index(req.Grant.FSWrite, m.HostPath)
			if i < 0 {
				return "", fmt.Errorf("mount %s is no write grant of the request", m.HostPath)
			}
			dir := shared.StageUpper(req.Stage, i)
			return dir, os.MkdirAll(dir, 0o700)
		}
	}
	defer roots.close()
	for i, f := range res.Files {
		if err := roots.writeFile(ctx, f); err != nil {
			res.Violations = append(res.Violations, shared.Violation{Kind: "file", Target: f.Path, Detail: "not written back: " + err.Error()})
		}
		res.Files[i].Data = nil
	}
	return res
}

// mountRoots are the os.Roots of a run's mounts, each opened on first
// use; an opening that failed fails every file of that mount alike.
type mountRoots struct {
	mounts []shared.Mount
	// stage, when set, names the directory a mount's files go to instead
	// of its host path.
	stage func(shared.Mount) (string, error)
	roots []*os.Root
	errs  []error
}

func newMountRoots(mounts []shared.Mount) *mountRoots {
	return &mountRoots{mounts: mounts, roots: make([]*os.Root, len(mounts)), errs: make([]error, len(mounts))}
}

func (r *mountRoots) open(i int) (*os.Root, error) {
	if r.roots[i] == nil && r.errs[i] == nil {
		dir := r.mounts[i].HostPath
		if r.stage != nil {
			dir, r.errs[i] = r.stage(r.mounts[i])
		}
		if r.errs[i] == nil {
			r.roots[i], r.errs[i] = os.OpenRoot(dir)
		}
	}
	return r.roots[i], r.errs[i]
}

func (r *mountRoots) close() {
	for _, root := range r.roots {
		if root != nil {
			root.Close()
		}
	}
}

func (r *mountRoots) writeFile(ctx context.Context, f shared.File) error {
	if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
		return fmt.Errorf("%q is not a clean absolute path", f.Path)
	}
	m := -1
	for i, mount := range r.mounts {
		if mount.Writable && shared.Under(f.Path, mount.Logical) && f.Path != mount.Logical {
			m = i
			break
		}
	}
	if m < 0 {
		return fmt.Errorf("no writable mount holds it")
	}
	rel, err := filepath.Rel(r.mounts[m].Logical, f.Path)
	if err != nil {
		return err
	}
	root, err := r.open(m)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	mode := os.FileMode(0o644)
	if f.Mode&0o111 != 0 {
		mode = 0o755
	}
	// Through a temporary file renamed into place: a FIFO (or anything
	// else) a run left at the path is replaced, never opened.
	return safeio.WriteIn(ctx, root, rel, f.Data, mode)
}
