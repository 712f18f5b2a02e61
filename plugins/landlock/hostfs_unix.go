//go:build unix

package landlock

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
)

// removeTree removes the directory path and everything beneath it with two
// descriptors at most, however deep the tree: it descends into the first
// directory that is not empty and climbs back through "..", so a tree
// deeper than the descriptor limit (which defeats a recursive removal) goes
// too. Symlinks are removed, never followed.
func removeTree(path string) error {
	parent, err := unix.Open(filepath.Dir(path), confiner.DirFlags, 0)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	base := filepath.Base(path)
	cur, err := unix.Openat(parent, base, confiner.DirFlags, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	depth := 0
	for {
		down, err := emptyDir(cur)
		if err != nil {
			unix.Close(cur)
			return err
		}
		if down >= 0 {
			unix.Close(cur)
			cur, depth = down, depth+1
			continue
		}
		if depth == 0 {
			unix.Close(cur)
			return unix.Unlinkat(parent, base, unix.AT_REMOVEDIR)
		}
		up, err := unix.Openat(cur, "..", confiner.DirFlags, 0)
		unix.Close(cur)
		if err != nil {
			return err
		}
		cur, depth = up, depth-1
	}
}

// emptyDir removes what it can of the directory fd: files, links and empty
// directories. It returns a descriptor of the first directory that is not
// empty (the caller descends into it), or -1 once fd is empty.
func emptyDir(fd int) (int, error) {
	for {
		names, err := readNames(fd, 1024)
		if err != nil {
			return -1, err
		}
		if len(names) == 0 {
			return -1, nil
		}
		for _, name := range names {
			err := unix.Unlinkat(fd, name, 0)
			if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
				err = unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)
				if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
					return unix.Openat(fd, name, confiner.DirFlags, 0)
				}
			}
			if err != nil && !errors.Is(err, unix.ENOENT) {
				return -1, err
			}
		}
	}
}

// readNames reads up to n names of the directory fd from its start.
func readNames(fd, n int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(dup), "dir")
	defer d.Close()
	if _, err := unix.Seek(dup, 0, 0); err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(n)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return names, err
}

// sweepTemps removes the temporary directories that plugins which are no
// longer running left in the system's temporary directory (their names
// carry the plugin's pid).
func sweepTemps() {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
			_ = removeTree(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}
