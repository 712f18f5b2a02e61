// Package skilltar packs a skill directory into its canonical tar, the form
// in which a remote backend stages a skill and by whose SHA-256 digest the
// host names it (shared.Skill, docs/contract.md §11). The same files always
// give the same bytes, whoever packs them and whenever:
//
//   - regular files and directories only; a symlink, device, FIFO or
//     socket anywhere in the skill is an error naming it;
//   - entries sorted by the byte order of their slash-separated path
//     relative to the skill, directories with a trailing slash;
//   - mode 0755 for directories and for files with any execute bit, 0644
//     otherwise; uid and gid 0, no user or group names, mtime 0 (the
//     epoch), no extended attributes;
//   - PAX format, ended by the two zero blocks of the tar format.
//
// A skill larger than MaxSize packed is refused.
package skilltar

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// MaxSize bounds a packed skill: 64 MiB.
const MaxSize = 64 << 20

// ErrTooLarge is returned for a skill whose canonical tar exceeds MaxSize.
var ErrTooLarge = errors.New("skill larger than 64 MiB packed")

// Write writes dir's canonical tar to w and returns its digest
// ("sha256:" and 64 lowercase hex digits) and size in bytes.
func Write(w io.Writer, dir string) (digest string, size int64, err error) {
	entries, err := list(dir)
	if err != nil {
		return "", 0, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", 0, fmt.Errorf("pack %s: %w", dir, err)
	}
	defer root.Close()
	h := sha256.New()
	cw := &counter{w: io.MultiWriter(w, h)}
	tw := tar.NewWriter(cw)
	for _, e := range entries {
		if err := add(tw, root, e); err != nil {
			return "", 0, fmt.Errorf("pack %s: %w", filepath.Join(dir, filepath.FromSlash(e.path)), err)
		}
		if cw.n > MaxSize {
			return "", 0, fmt.Errorf("pack %s: %w", dir, ErrTooLarge)
		}
	}
	if err := tw.Close(); err != nil {
		return "", 0, fmt.Errorf("pack %s: %w", dir, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), cw.n, nil
}

// Digest is the digest and size of dir's canonical tar, computed without
// keeping it.
func Digest(dir string) (string, int64, error) { return Write(io.Discard, dir) }

type entry struct {
	path string // slash-separated, relative; directories end in "/"
	mode int64
	size int64
}

// list walks dir without following symlinks and returns its entries in
// canonical order.
func list(dir string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			if !d.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case t.IsDir():
			out = append(out, entry{path: rel + "/", mode: 0o755})
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			mode := int64(0o644)
			if fi.Mode().Perm()&0o111 != 0 {
				mode = 0o755
			}
			out = append(out, entry{path: rel, mode: mode, size: fi.Size()})
		default:
			return fmt.Errorf("%s: a skill to stage may hold only files and directories, not a %s", p, kind(t))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

func kind(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return "symlink"
	case t&fs.ModeNamedPipe != 0:
		return "FIFO"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

func add(tw *tar.Writer, root *os.Root, e entry) error {
	hdr := &tar.Header{Name: e.path, Mode: e.mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
	if e.path[len(e.path)-1] == '/' {
		hdr.Typeflag = tar.TypeDir
		return tw.WriteHeader(hdr)
	}
	// The file is opened inside the skill's root, so one swapped for a
	// link since the walk cannot lead out of it; its size is what the
	// walk saw, and a file that changed size in between is an error.
	// Non-blocking and not following a final link: a FIFO swapped in since
	// the walk cannot stall the host, and the type is checked again.
	f, err := root.OpenFile(filepath.FromSlash(e.path), os.O_RDONLY|openFlags, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is no longer a regular file", e.path)
	}
	hdr.Typeflag, hdr.Size = tar.TypeReg, e.size
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, io.LimitReader(f, e.size+1))
	if err != nil {
		return err
	}
	if n != e.size {
		return fmt.Errorf("changed while being packed (%d bytes, then %d)", e.size, n)
	}
	return nil
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
