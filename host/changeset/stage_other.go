//go:build !linux

package changeset

import "io/fs"

// whiteout: only Linux's overlayfs stages writes; elsewhere a character
// device in a stage is refused like any other (TypeOther).
func whiteout(fs.FileInfo) bool { return false }

func opaque(string) bool { return false }
