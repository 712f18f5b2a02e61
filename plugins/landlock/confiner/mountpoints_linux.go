package confiner

import (
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// mountPoints makes the mount points of a view beneath its root, as
// mkdirBeneath does (each component made and opened without following a
// symlink from the one before), but keeps the directories it opened, so
// that binds sharing a parent do not walk to it and make it again: two
// dozen /etc files were ten system calls each. The root is the view's own
// fresh tmpfs, which nothing else can reach while it is assembled.
type mountPoints struct {
	root int
	dirs map[string]int // clean absolute path -> directory descriptor
}

func newMountPoints(root int) *mountPoints {
	return &mountPoints{root: root, dirs: map[string]int{}}
}

// dir makes path and its missing parents and returns a descriptor of it,
// which stays mountPoints' to close.
func (m *mountPoints) dir(path string) (int, error) {
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

// file makes path an empty file (its parents, directories) and opens it;
// the caller closes the descriptor.
func (m *mountPoints) file(path string) (int, error) {
	parent, err := m.dir(filepath.Dir(filepath.Clean("/" + path)))
	if err != nil {
		return -1, err
	}
	return unix.Openat(parent, filepath.Base(path), unix.O_CREAT|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
}

// mounted forgets path and everything beneath it once something is
// mounted there: their descriptors name what the mount now covers.
func (m *mountPoints) mounted(path string) {
	path = filepath.Clean("/" + path)
	for p, fd := range m.dirs {
		if p == path || strings.HasPrefix(p, path+"/") {
			unix.Close(fd)
			delete(m.dirs, p)
		}
	}
}

func (m *mountPoints) close() {
	for p, fd := range m.dirs {
		unix.Close(fd)
		delete(m.dirs, p)
	}
}
