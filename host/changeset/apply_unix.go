//go:build unix

package changeset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
)

// Apply applies to the host each change of cs that p allows and that is
// still pending (no Outcome yet, or Kept), reading staged content from
// stage(c) (the file's path in the stage). named are paths the user
// named on purpose (see Policy.Judge). A host path changed since started
// (its ctime is later) is a conflict: the host's version stays, and for a
// file the run's is put beside it as NAME.skillhost-RUN. Every path is
// reached from its grant's root one component at a time without following
// a symbolic link; a file moves in by rename when the stage shares its
// file system, else by a copy renamed into place, so no file is ever seen
// half-written. It sets each change's Outcome and Reason.
func Apply(cs []Change, p Policy, stage func(Change) string, run string, started time.Time, named []string) {
	a := applier{run: run, started: started}
	defer a.close()
	for i := range cs {
		c := &cs[i]
		if c.Outcome != "" && c.Outcome != Kept {
			continue
		}
		if why := p.Judge(*c, shared.UnderAny(c.Path, named)); why != "" {
			c.Outcome, c.Reason = Refused, why
			continue
		}
		c.Outcome, c.Reason, c.KeptAt = Applied, "", ""
		if err := a.apply(c, stage(*c)); err != nil {
			var conflict *conflictError
			if errors.As(err, &conflict) {
				c.Outcome, c.Reason, c.KeptAt = Conflict, conflict.why, conflict.keptAt
				continue
			}
			c.Outcome, c.Reason = Refused, err.Error()
		}
	}
}

type conflictError struct{ why, keptAt string }

func (e *conflictError) Error() string { return e.why }

type applier struct {
	run     string
	started time.Time
	roots   map[string]int
}

func (a *applier) close() {
	for _, fd := range a.roots {
		unix.Close(fd)
	}
}

// parent opens the directory holding c.Path beneath its root.
func (a *applier) parent(c *Change) (int, string, error) {
	if a.roots == nil {
		a.roots = map[string]int{}
	}
	root, ok := a.roots[c.Root]
	if !ok {
		fd, err := openPath(c.Root)
		if err != nil {
			return -1, "", fmt.Errorf("open write grant %s: %w", c.Root, err)
		}
		a.roots[c.Root], root = fd, fd
	}
	rel := c.Rel()
	if rel == "." || strings.HasPrefix(rel, "../") || rel == ".." {
		return -1, "", fmt.Errorf("%s is not inside %s", c.Path, c.Root)
	}
	dir, name := filepath.Split(rel)
	if c.Discarded {
		// Its directories were the run's own: made as the file is placed.
		if err := mkdirsBeneath(root, dir); err != nil {
			return -1, "", fmt.Errorf("its directory %s: %w", filepath.Join(c.Root, dir), err)
		}
	}
	fd, err := openBeneath(root, dir)
	if err != nil {
		return -1, "", fmt.Errorf("its directory %s: %w", filepath.Join(c.Root, dir), err)
	}
	return fd, name, nil
}

func (a *applier) apply(c *Change, staged string) error {
	dir, name, err := a.parent(c)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	serr := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	exists := serr == nil
	if serr != nil && !errors.Is(serr, unix.ENOENT) {
		return serr
	}
	// A directory's ctime moves with what is made or removed in it, by
	// this apply too: only other files can be said to have changed.
	changed := exists && st.Mode&unix.S_IFMT != unix.S_IFDIR && time.Unix(st.Ctim.Unix()).After(a.started)
	switch c.Kind {
	case Deleted:
		if !exists {
			return nil
		}
		if changed {
			return &conflictError{why: "changed on the host since the run started; not deleted"}
		}
		flags := 0
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			flags = unix.AT_REMOVEDIR
		}
		if err := unix.Unlinkat(dir, name, flags); err != nil {
			if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
				return fmt.Errorf("not deleted: it holds paths that were not")
			}
			return err
		}
		return nil
	case Created, Modified:
	default:
		return fmt.Errorf("unknown change %q", c.Kind)
	}
	if c.Type == TypeDir {
		if exists && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return unix.Fchmodat(dir, name, c.Mode&0o1777, 0)
		}
		if exists {
			return &conflictError{why: "the host has something else there now"}
		}
		return unix.Mkdirat(dir, name, c.Mode&0o1777)
	}
	if exists && (c.Kind == Created || changed || st.Mode&unix.S_IFMT == unix.S_IFDIR) {
		// Someone else made or changed it while the run ran: both stay.
		beside := name + ".skillhost-" + a.run
		if err := a.place(c, staged, dir, beside, false); err != nil {
			return &conflictError{why: fmt.Sprintf("changed on the host since the run started, and the run's version could not be kept beside it: %v", err)}
		}
		return &conflictError{why: "changed on the host since the run started; the run's version is beside it", keptAt: filepath.Join(filepath.Dir(c.Path), beside)}
	}
	return a.place(c, staged, dir, name, true)
}

// place puts the staged file or symlink at name in dir, replacing what is
// there when replace is set.
func (a *applier) place(c *Change, staged string, dir int, name string, replace bool) error {
	tmp := ".skillhost-" + a.run + "-" + name
	if len(tmp) > 255 {
		tmp = tmp[:255]
	}
	_ = unix.Unlinkat(dir, tmp, 0)
	if c.Type == TypeSymlink {
		if err := unix.Symlinkat(c.Target, dir, tmp); err != nil {
			return err
		}
		return a.rename(dir, tmp, name, replace)
	}
	sdir, sname, err := openStage(staged)
	if err != nil {
		return err
	}
	defer unix.Close(sdir)
	var sst, dst unix.Stat_t
	if err := unix.Fstatat(sdir, sname, &sst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("staged %s: %w", staged, err)
	}
	if sst.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("staged %s is not a regular file", staged)
	}
	if err := unix.Fstat(dir, &dst); err != nil {
		return err
	}
	if sst.Dev == dst.Dev && sst.Nlink == 1 {
		// The same file system: the staged file itself moves in.
		if err := unix.Fchmodat(sdir, sname, c.Mode&0o777, 0); err != nil {
			return err
		}
		if replace {
			return unix.Renameat(sdir, sname, dir, name)
		}
		return renameNoReplace(sdir, sname, dir, name)
	}
	src, err := unix.Openat(sdir, sname, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	in := os.NewFile(uintptr(src), staged)
	defer in.Close()
	dfd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, c.Mode&0o777)
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(dfd), tmp)
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(os.FileMode(c.Mode & 0o777))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		return err
	}
	return a.rename(dir, tmp, name, replace)
}

func (a *applier) rename(dir int, from, to string, replace bool) error {
	var err error
	if replace {
		err = unix.Renameat(dir, from, dir, to)
	} else {
		err = renameNoReplace(dir, from, dir, to)
	}
	if err != nil {
		_ = unix.Unlinkat(dir, from, 0)
	}
	return err
}

// openStage opens the directory of a staged path, without following a
// symbolic link in it.
func openStage(path string) (int, string, error) {
	dir, name := filepath.Split(filepath.Clean(path))
	fd, err := openPath(dir)
	return fd, name, err
}

// openPath opens the directory path from / one component at a time,
// following no symbolic link.
func openPath(path string) (int, error) {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	next, err := openBeneath(fd, strings.TrimPrefix(filepath.Clean(path), "/"))
	unix.Close(fd)
	return next, err
}

// openBeneath opens the directory rel beneath dir one component at a time,
// following no symbolic link ("" and "." are dir itself, reopened).
func openBeneath(dir int, rel string) (int, error) {
	fd, err := unix.Openat(dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(filepath.Clean(rel), "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(fd)
			return -1, fmt.Errorf("%q leads out", rel)
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return -1, fmt.Errorf("%s is not a directory (a symbolic link is not followed)", c)
			}
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// mkdirsBeneath makes the directories of rel beneath dir that are missing,
// following no symbolic link.
func mkdirsBeneath(dir int, rel string) error {
	fd, err := unix.Openat(dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	for _, c := range strings.Split(filepath.Clean(rel), "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(fd)
			return fmt.Errorf("%q leads out", rel)
		}
		if err := unix.Mkdirat(fd, c, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(fd)
			return err
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return err
		}
		fd = next
	}
	unix.Close(fd)
	return nil
}
