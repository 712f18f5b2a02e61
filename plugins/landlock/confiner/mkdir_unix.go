//go:build unix

package confiner

import (
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DirFlags open a directory for *at calls without following a symlink;
// the plugin's own file work on the host uses them too.
const DirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// MkdirNoFollow makes the absolute path and its missing parents (see
// mkdirBeneath, from the root): a symlink anywhere on the way fails the
// call (ELOOP or ENOTDIR) instead of leading the plugin, which may be root,
// elsewhere. The plugin creates the write grants that do not exist yet
// with it.
func MkdirNoFollow(path string) error {
	if !filepath.IsAbs(path) {
		return unix.EINVAL
	}
	root, err := unix.Open("/", DirFlags, 0)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	fd, err := mkdirBeneath(root, path)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// mkdirBeneath makes path (and its parents) beneath the directory dirfd,
// one component at a time, each opened without following a symlink from
// the one before; directories that exist are fine. It returns a descriptor
// of path.
func mkdirBeneath(dirfd int, path string) (int, error) {
	cur, err := unix.Openat(dirfd, ".", DirFlags, 0)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(strings.Trim(filepath.Clean("/"+path), "/"), "/") {
		if name == "" {
			continue
		}
		if err := unix.Mkdirat(cur, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(cur)
			return -1, err
		}
		next, err := unix.Openat(cur, name, DirFlags, 0)
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}
