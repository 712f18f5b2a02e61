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

// mkdirBeneath makes path (and its parents) beneath the directory dirfd
// (see dirMaker) and returns a descriptor of path, the caller's to close.
func mkdirBeneath(dirfd int, path string) (int, error) {
	m := newDirMaker(dirfd)
	defer m.close()
	return m.take(path)
}

// dirMaker makes directories beneath a root one component at a time, each
// made and opened without following a symlink from the one before, so a
// symlink on the way fails the call (ELOOP or ENOTDIR); directories that
// exist are fine. It keeps the directories it opened, so that paths that
// share a parent do not walk to it and make it again: a view's two dozen
// /etc files were ten system calls each.
type dirMaker struct {
	root int
	dirs map[string]int // clean absolute path -> directory descriptor
}

func newDirMaker(root int) *dirMaker {
	return &dirMaker{root: root, dirs: map[string]int{}}
}

// dir makes path and its missing parents and returns a descriptor of it,
// which stays the dirMaker's to close.
func (m *dirMaker) dir(path string) (int, error) {
	path = filepath.Clean("/" + path)
	if path == "/" {
		return m.root, nil
	}
	if fd, ok := m.dirs[path]; ok {
		return fd, nil
	}
	parent, err := m.dir(filepath.Dir(path))
	if err != nil {
		return -1, err
	}
	name := filepath.Base(path)
	if err := unix.Mkdirat(parent, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, err
	}
	fd, err := unix.Openat(parent, name, DirFlags, 0)
	if err != nil {
		return -1, err
	}
	m.dirs[path] = fd
	return fd, nil
}

// take is dir, but the descriptor is the caller's to close.
func (m *dirMaker) take(path string) (int, error) {
	fd, err := m.dir(path)
	if err != nil {
		return -1, err
	}
	if fd == m.root {
		return unix.Openat(m.root, ".", DirFlags, 0)
	}
	delete(m.dirs, filepath.Clean("/"+path))
	return fd, nil
}

// file makes path an empty file (its parents, directories) and opens it;
// the caller closes the descriptor.
func (m *dirMaker) file(path string) (int, error) {
	parent, err := m.dir(filepath.Dir(filepath.Clean("/" + path)))
	if err != nil {
		return -1, err
	}
	return unix.Openat(parent, filepath.Base(path), unix.O_CREAT|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
}

// mounted forgets path and everything beneath it once something is
// mounted there: their descriptors name what the mount now covers.
func (m *dirMaker) mounted(path string) {
	path = filepath.Clean("/" + path)
	for p, fd := range m.dirs {
		if p == path || strings.HasPrefix(p, path+"/") {
			unix.Close(fd)
			delete(m.dirs, p)
		}
	}
}

func (m *dirMaker) close() {
	for p, fd := range m.dirs {
		unix.Close(fd)
		delete(m.dirs, p)
	}
}
