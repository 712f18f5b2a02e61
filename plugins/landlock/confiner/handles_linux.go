package confiner

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// handles are O_PATH descriptors of the paths the host resolved, opened
// once without following any symlink.
type handles map[string]int

// openHandles opens every path in paths. The host resolved each through
// every symlink, so a symlink anywhere along one now means something swapped
// a directory since: the run is refused. A missing path is skipped, as
// Landlock skips it.
func openHandles(paths []string) (handles, error) {
	hs := handles{}
	for _, p := range paths {
		if p == "" || hs[p] != 0 {
			continue
		}
		fd, err := openNoSymlinks(p)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			hs.close()
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return nil, fmt.Errorf("grant path %s now passes through a symlink: it changed after the grant was computed; refusing to run", p)
			}
			return nil, fmt.Errorf("open grant path %s: %w", p, err)
		}
		hs[p] = fd
	}
	return hs, nil
}

// openNoSymlinks opens path with O_PATH, failing with ELOOP if any of its
// components is a symlink: openat2 with RESOLVE_NO_SYMLINKS, or, on
// kernels before 5.6, one component at a time with O_NOFOLLOW.
func openNoSymlinks(path string) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if !errors.Is(err, unix.ENOSYS) {
		return fd, err
	}
	if !strings.HasPrefix(path, "/") {
		return -1, unix.EINVAL
	}
	cur, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(strings.Trim(path, "/"), "/") {
		if name == "" || name == "." || name == ".." {
			unix.Close(cur)
			return -1, unix.EINVAL
		}
		next, err := unix.Openat(cur, name, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return -1, unix.ELOOP
		}
		cur = next
	}
	return cur, nil
}

func (hs handles) close() {
	for _, fd := range hs {
		unix.Close(fd)
	}
}

// fd returns the handle of path, or opens it by name (following symlinks)
// for a path the host did not resolve: system directories, devices, the
// run's private temporary directory. owned reports whether the caller must
// close it.
func (hs handles) fd(path string) (fd int, owned bool, err error) {
	if fd, ok := hs[path]; ok {
		return fd, false, nil
	}
	fd, err = unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	return fd, err == nil, err
}

// reopenStaged points the handle of each staged write grant at the overlay
// the view shows there, not at the host's directory beneath it: Landlock
// rules hold on the inode they are given, and the run reaches the grant
// only through the overlay. Called inside the view, after the pivot.
func (hs handles) reopenStaged(v *View) error {
	for _, b := range v.Binds {
		if b.Upper == "" {
			continue
		}
		fd, err := openNoSymlinks(b.Path)
		if err != nil {
			return fmt.Errorf("staged %s in the view: %w", b.Path, err)
		}
		if old, ok := hs[b.Path]; ok && old > 0 {
			unix.Close(old)
		}
		hs[b.Path] = fd
	}
	return nil
}
