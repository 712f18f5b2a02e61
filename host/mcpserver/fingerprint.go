package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost/host/catalog"
)

// maxWatched bounds the entries fingerprint looks at per root, so a huge
// tree under a root cannot make every poll slow.
const maxWatched = 20000

// fingerprint summarises the names, sizes, modes and times of everything
// under roots (symlinked skill directories followed, .git and node_modules
// skipped). Any change to a skill changes it.
func fingerprint(roots []string) string {
	h := sha256.New()
	for _, root := range roots {
		fmt.Fprintf(h, "root %s\n", root)
		budget := maxWatched
		walk(h, root, &budget)
		// A skill directory may be a symlink; WalkDir does not follow it.
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if e.Type()&os.ModeSymlink != 0 {
				walk(h, filepath.Join(root, e.Name()), &budget)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// walk hashes the tree at dir (followed if it is itself a symlink) until
// budget entries have been seen.
func walk(h io.Writer, dir string, budget *int) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		fmt.Fprintf(h, "%s missing\n", dir)
		return
	}
	_ = filepath.WalkDir(real, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(h, "%s error\n", p)
			return nil
		}
		if *budget--; *budget < 0 {
			return fs.SkipAll
		}
		if e.IsDir() && p != real && catalog.Skipped(e.Name()) {
			return fs.SkipDir
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s %d %o %d\n", p, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		if fi.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Stat(p); err == nil {
				fmt.Fprintf(h, "-> %d %o %d\n", target.Size(), target.Mode(), target.ModTime().UnixNano())
			}
		}
		return nil
	})
}
