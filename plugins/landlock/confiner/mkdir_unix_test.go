//go:build unix

package confiner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A dirMaker makes directories and files beneath its root, opens each
// directory once, refuses to follow a symlink on the way, and forgets what
// a mount covers.
func TestDirMaker(t *testing.T) {
	root := t.TempDir()
	rootFD, err := unix.Open(root, DirFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rootFD)
	if err := os.Symlink("/", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	m := newDirMaker(rootFD)
	defer m.close()

	a, err := m.dir("/etc/ssl/certs")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := m.dir("etc/ssl/certs/"); b != a {
		t.Errorf("the same directory was opened twice (%d, %d)", a, b)
	}
	f, err := m.file("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(f)
	for _, p := range []string{"etc/ssl/certs", "etc/hosts"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s was not made: %v", p, err)
		}
	}
	if fi, _ := os.Lstat(filepath.Join(root, "etc/hosts")); fi != nil && !fi.Mode().IsRegular() {
		t.Errorf("etc/hosts is %v, want a file", fi.Mode())
	}

	if _, err := m.dir("/link/tmp"); !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("dir through a symlink: %v, want ELOOP or ENOTDIR", err)
	}
	if _, err := m.file("/link/passwd"); !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("file through a symlink: %v, want ELOOP or ENOTDIR", err)
	}

	m.mounted("/etc/ssl")
	for _, p := range []string{"/etc/ssl", "/etc/ssl/certs"} {
		if _, ok := m.dirs[p]; ok {
			t.Errorf("%s is still kept after a mount on /etc/ssl", p)
		}
	}
	if _, ok := m.dirs["/etc"]; !ok {
		t.Error("/etc was forgotten by a mount beneath it")
	}
}
