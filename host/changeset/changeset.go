// Package changeset is what a staged run changed in the host's trees: it
// reads the changes a backend left in the run's stage (shared.Request.Stage,
// in the layout of an overlayfs upper layer), judges each against one
// protection policy, and applies those it allows beneath descriptors opened
// without following symbolic links, each file atomically. What it does not
// apply (refused, interrupted, conflicting) stays in the stage, listed in
// the run's manifest, until `skillhost changes apply` or `drop`.
package changeset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/host/internal/safeio"
)

// Kinds of change.
const (
	Created  = "created"
	Modified = "modified"
	Deleted  = "deleted"
)

// Types of what changed.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	// TypeOther is a device node, FIFO or socket: never applied.
	TypeOther = "other"
)

// Outcomes of a change.
const (
	Applied  = "applied"
	Refused  = "refused"
	Conflict = "conflict"
	// Kept: not applied because the run was interrupted or the user
	// declined; `skillhost changes apply` applies it later.
	Kept = "kept"
	// Discarded: written outside every write grant (to the run's private
	// /tmp) where the host has the directory; applied only when named.
	Discarded = "discarded"
)

// Change is one path a run created, modified or deleted.
type Change struct {
	// Path is the host's path; Root the write grant it lies in, and Grant
	// that grant's index in the request (its stage is StageUpper(stage,
	// Grant)).
	Path  string `json:"path"`
	Root  string `json:"root"`
	Grant int    `json:"grant"`
	// Kind is Created, Modified or Deleted; Type what the path is (for a
	// deletion, what it was).
	Kind string `json:"change"`
	Type string `json:"type"`
	// Mode holds the permission bits, set-uid, set-gid and sticky
	// included; Size the bytes of a file; Target a symlink's target.
	Mode   uint32 `json:"mode"`
	Size   int64  `json:"size"`
	Target string `json:"target,omitempty"`
	// Outcome and Reason say what became of it; KeptAt names where a
	// conflicting version was put beside the host's file.
	Outcome string `json:"outcome,omitempty"`
	Reason  string `json:"reason,omitempty"`
	KeptAt  string `json:"kept_at,omitempty"`
	// Discarded marks a write outside every write grant, kept from the
	// run's private /tmp (Root is then the file's directory).
	Discarded bool `json:"discarded,omitempty"`
}

// existingAncestor is the nearest of dir and its parents that is a
// directory on the host.
func existingAncestor(dir string) string {
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	return dir
}

// ScanDiscarded reads the files a backend kept in dir
// (shared.StageDiscarded) by their absolute paths beneath it.
func ScanDiscarded(dir string) ([]Change, error) {
	var out []Change
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if len(out) >= maxChanges {
			return ErrTooMany
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		abs := string(filepath.Separator) + rel
		root := existingAncestor(filepath.Dir(abs))
		out = append(out, Change{Path: abs, Root: root, Grant: -1, Kind: Created, Type: TypeFile,
			Mode: unixMode(info.Mode()), Size: info.Size(), Outcome: Discarded, Discarded: true,
			Reason: fmt.Sprintf("written to the run's private /tmp, outside every write grant (grant fs_write %s to write there)", root)})
		return nil
	})
	return out, err
}

// Rel is c's path relative to its grant, slash-separated.
func (c Change) Rel() string {
	rel, err := filepath.Rel(c.Root, c.Path)
	if err != nil {
		return c.Path
	}
	return filepath.ToSlash(rel)
}

// Setuid, setgid and sticky bits as they appear in Change.Mode.
const (
	modeSetuid = 0o4000
	modeSetgid = 0o2000
	modeSticky = 0o1000
)

func unixMode(m fs.FileMode) uint32 {
	out := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		out |= modeSetuid
	}
	if m&fs.ModeSetgid != 0 {
		out |= modeSetgid
	}
	if m&fs.ModeSticky != 0 {
		out |= modeSticky
	}
	return out
}

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return TypeFile
	case m.IsDir():
		return TypeDir
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	}
	return TypeOther
}

// maxChanges bounds the changes read from one grant's stage: a run that
// made more is reported as such and nothing of it is applied.
const maxChanges = 200_000

// ErrTooMany is returned when a stage holds more than maxChanges changes.
var ErrTooMany = fmt.Errorf("more than %d changes", maxChanges)

// Scan reads the changes staged in upper (an overlayfs upper layer) to the
// real directory root, grant being root's index in the request. It compares
// with root as it is now: a file copied up but left as it was is no change.
// Parents come before what lies beneath them.
func Scan(upper, root string, grant int) ([]Change, error) {
	s := scanner{upper: upper, root: root, grant: grant}
	if _, err := os.Lstat(upper); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err := s.dir("."); err != nil {
		return s.out, err
	}
	return s.out, nil
}

type scanner struct {
	upper, root string
	grant       int
	out         []Change
}

func (s *scanner) add(c Change) error {
	if len(s.out) >= maxChanges {
		return ErrTooMany
	}
	c.Root, c.Grant = s.root, s.grant
	s.out = append(s.out, c)
	return nil
}

// dir compares the upper directory rel with the lower one.
func (s *scanner) dir(rel string) error {
	entries, err := os.ReadDir(filepath.Join(s.upper, rel))
	if err != nil {
		return fmt.Errorf("read stage %s: %w", filepath.Join(s.upper, rel), err)
	}
	if rel != "." && opaque(filepath.Join(s.upper, rel)) {
		// The run removed this directory and made it anew: whatever of
		// the lower one it did not make again is deleted.
		lower, _ := os.ReadDir(filepath.Join(s.root, rel))
		for _, l := range lower {
			if !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == l.Name() }) {
				if err := s.deleted(filepath.Join(rel, l.Name())); err != nil {
					return err
				}
			}
		}
	}
	for _, e := range entries {
		if err := s.entry(filepath.Join(rel, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// deleted records the deletion of the host's rel and, for a directory,
// of everything in it, deepest first: each is judged on its own, so a
// protected path inside a deleted directory stays, and the directory with
// it.
func (s *scanner) deleted(rel string) error {
	top := filepath.Join(s.root, rel)
	fi, err := os.Lstat(top)
	if err != nil {
		return nil // gone from the host too
	}
	var inside []Change
	if fi.IsDir() {
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == top {
				return nil
			}
			if len(s.out)+len(inside) >= maxChanges {
				return ErrTooMany
			}
			if info, err := d.Info(); err == nil {
				inside = append(inside, Change{Path: p, Kind: Deleted, Type: typeOf(info.Mode()), Mode: unixMode(info.Mode()), Size: sizeOf(info)})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	slices.Reverse(inside)
	for _, c := range inside {
		if err := s.add(c); err != nil {
			return err
		}
	}
	return s.add(Change{Path: top, Kind: Deleted, Type: typeOf(fi.Mode()), Mode: unixMode(fi.Mode()), Size: sizeOf(fi)})
}

func sizeOf(fi fs.FileInfo) int64 {
	if fi.Mode().IsRegular() {
		return fi.Size()
	}
	return 0
}

func (s *scanner) entry(rel string) error {
	up, err := os.Lstat(filepath.Join(s.upper, rel))
	if err != nil {
		return fmt.Errorf("read stage: %w", err)
	}
	path := filepath.Join(s.root, rel)
	if whiteout(up) {
		return s.deleted(rel)
	}
	low, lerr := os.Lstat(path)
	if lerr == nil && typeOf(low.Mode()) != typeOf(up.Mode()) {
		// A file became a directory or the like: the old one goes first.
		if err := s.deleted(rel); err != nil {
			return err
		}
		lerr = fs.ErrNotExist
	}
	c := Change{Path: path, Kind: Created, Type: typeOf(up.Mode()), Mode: unixMode(up.Mode()), Size: sizeOf(up)}
	if c.Type == TypeSymlink {
		c.Target, _ = os.Readlink(filepath.Join(s.upper, rel))
	}
	if lerr == nil {
		c.Kind = Modified
		if same(filepath.Join(s.upper, rel), path, up, low) {
			c.Kind = ""
		}
	}
	if c.Kind != "" {
		if err := s.add(c); err != nil {
			return err
		}
	}
	if c.Type == TypeDir {
		return s.dir(rel)
	}
	return nil
}

// same reports whether the staged path a (info ai) equals the host's b (bi):
// same type and mode, and the same bytes or link target.
func same(a, b string, ai, bi fs.FileInfo) bool {
	if ai.Mode() != bi.Mode() {
		return false
	}
	switch typeOf(ai.Mode()) {
	case TypeDir:
		return true
	case TypeSymlink:
		ta, _ := os.Readlink(a)
		tb, _ := os.Readlink(b)
		return ta == tb
	case TypeFile:
		return ai.Size() == bi.Size() && sameBytes(a, b)
	}
	return false
}

func sameBytes(a, b string) bool {
	// a is the run's and b the host's: neither is followed through a
	// final link nor waited on if it is not a regular file.
	fa, err := safeio.OpenRegularNoFollow(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := safeio.OpenRegularNoFollow(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			return ea != nil && eb != nil
		}
	}
}

// Summary counts changes by outcome, for a line of text.
func Summary(cs []Change) map[string]int {
	out := map[string]int{}
	for _, c := range cs {
		out[c.Outcome]++
	}
	return out
}

// Paths lists the relative paths of cs, for messages.
func Paths(cs []Change) string {
	var names []string
	for _, c := range cs {
		if c.Discarded {
			names = append(names, c.Path)
		} else {
			names = append(names, c.Rel())
		}
	}
	if len(names) > 5 {
		names = append(names[:5], fmt.Sprintf("and %d more", len(names)-5))
	}
	return strings.Join(names, ", ")
}
