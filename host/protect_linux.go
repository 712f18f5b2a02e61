//go:build linux

package host

import (
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// moveAside renames path, if it exists, to path.skillhost-blocked-<run>,
// resolving its parent one component at a time without following a
// symlink. It returns the new path, or "" when path does not exist.
func moveAside(path, run string) (string, error) {
	dir, name := filepath.Split(filepath.Clean(path))
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer func() { unix.Close(fd) }()
	for _, c := range strings.Split(strings.Trim(dir, "/"), "/") {
		if c == "" {
			continue
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			return "", nil // the parent is not there: neither is path
		}
		if err != nil {
			return "", err
		}
		unix.Close(fd)
		fd = next
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	to := name + ".skillhost-blocked-" + run
	if err := unix.Renameat2(fd, name, fd, to, unix.RENAME_NOREPLACE); err != nil {
		return "", err
	}
	return filepath.Join(dir, to), nil
}
