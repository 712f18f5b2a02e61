//go:build unix && !linux

package changeset

import "golang.org/x/sys/unix"

// renameNoReplace renames, failing with EEXIST when to exists: a hard
// link cannot replace, and the old name goes once the new one is there.
func renameNoReplace(fromDir int, from string, toDir int, to string) error {
	if err := unix.Linkat(fromDir, from, toDir, to, 0); err != nil {
		return err
	}
	return unix.Unlinkat(fromDir, from, 0)
}
