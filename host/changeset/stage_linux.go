package changeset

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// whiteout reports whether fi is an overlayfs whiteout: a character device
// 0/0, which marks a deleted path.
func whiteout(fi fs.FileInfo) bool {
	if fi.Mode()&fs.ModeCharDevice == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Rdev == 0
}

// opaque reports whether the staged directory dir replaced the host's: it
// carries overlayfs's opaque mark (user.* in a user namespace or with
// userxattr, trusted.* otherwise).
func opaque(dir string) bool {
	buf := make([]byte, 4)
	for _, name := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		if n, err := unix.Lgetxattr(dir, name, buf); err == nil && n >= 1 && buf[0] == 'y' {
			return true
		}
	}
	return false
}

// renameNoReplace renames, failing with EEXIST when to exists.
func renameNoReplace(fromDir int, from string, toDir int, to string) error {
	return unix.Renameat2(fromDir, from, toDir, to, unix.RENAME_NOREPLACE)
}
