// Package safeio opens files that skills or runs control without letting
// them stall or redirect the host: a FIFO planted where a file was expected
// would block open(2) for as long as nobody writes it, and a device could
// be read without end. Every open here is non-blocking and checks the file
// type before a byte is read or written.
package safeio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// OpenRegular opens path for reading, without blocking on a FIFO or a
// device, and fails unless it is a regular file.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, path)
}

// OpenRegularNoFollow is OpenRegular for a path a run may have written:
// a final symlink is refused rather than followed.
func OpenRegularNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock|nofollow, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, path)
}

// OpenRegularIn opens name inside root for reading, not following a final
// symlink, without blocking, and fails unless it is a regular file.
func OpenRegularIn(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|nonblock|nofollow, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, name)
}

func regular(f *os.File, name string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s)", name, fi.Mode().Type())
	}
	return f, nil
}

// WriteIn writes data to name inside root through a temporary file renamed
// into place: whatever name was (a FIFO, a symlink, a file held open by
// someone) is replaced, never opened. ctx bounds the work: a cancelled
// call writes nothing more.
func WriteIn(ctx context.Context, root *os.Root, name string, data []byte, mode os.FileMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	tmp := name + ".skillhost-tmp-" + hex.EncodeToString(b[:])
	out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|nofollow|nonblock, mode)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}
