package temporal

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// skillCache keeps skills on a worker's disk by digest: each one unpacked
// once, after its tar was checked against the digest, into a directory
// named after it, read-only.
type skillCache struct {
	dir string
	// limit bounds the bytes of the skills kept: past it, the skills used
	// longest ago and not in use go first.
	limit int64
	mu    sync.Mutex
	// busy serialises fetches of the same digest; inUse counts the runs
	// holding each skill, which eviction leaves alone.
	busy  map[string]*sync.Mutex
	inUse map[string]int
	// size is the bytes the cache held after its last eviction.
	size atomic.Int64
}

func newSkillCache(dir string, limit int64) (*skillCache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("skill cache %s: %w", dir, err)
	}
	return &skillCache{dir: dir, limit: limit, busy: map[string]*sync.Mutex{}, inUse: map[string]int{}}, nil
}

// release ends a run's hold on a skill that get returned.
func (c *skillCache) release(digest string) {
	h, _ := hexOf(digest)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inUse[h]--; c.inUse[h] <= 0 {
		delete(c.inUse, h)
	}
}

// evict removes the skills used longest ago, and not in use, until the
// cache holds at most limit bytes.
func (c *skillCache) evict() {
	if c.limit <= 0 {
		return
	}
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type kept struct {
		name string
		used time.Time
		size int64
	}
	var all []kept
	var total int64
	defer func() { c.size.Store(total) }()
	for _, e := range entries {
		if _, err := hexOf("sha256:" + e.Name()); err != nil || !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		var size int64
		_ = filepath.WalkDir(filepath.Join(c.dir, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					size += fi.Size()
				}
			}
			return nil
		})
		all = append(all, kept{e.Name(), info.ModTime(), size})
		total += size
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range all {
		if total <= c.limit {
			return
		}
		if c.inUse[k.name] > 0 {
			continue
		}
		if os.RemoveAll(filepath.Join(c.dir, k.name)) == nil {
			total -= k.size
		}
	}
}

// hexOf is a digest's hex part, checked.
func hexOf(digest string) (string, error) {
	h, ok := strings.CutPrefix(digest, "sha256:")
	if _, err := hex.DecodeString(h); !ok || err != nil || len(h) != 64 {
		return "", fmt.Errorf("skill digest %q is not sha256: and 64 hex digits", digest)
	}
	return h, nil
}

// get returns the directory of the skill with digest, calling fetch to
// write its canonical tar when the cache does not hold it yet; fetched
// says whether it did. The caller holds the skill until it calls release.
func (c *skillCache) get(digest string, fetch func(w io.Writer) error) (dir string, fetched bool, err error) {
	h, err := hexOf(digest)
	if err != nil {
		return "", false, err
	}
	c.mu.Lock()
	m := c.busy[h]
	if m == nil {
		m = &sync.Mutex{}
		c.busy[h] = m
	}
	c.mu.Unlock()
	m.Lock()
	defer m.Unlock()
	dir = filepath.Join(c.dir, h)
	hold := func() {
		c.mu.Lock()
		c.inUse[h]++
		c.mu.Unlock()
		now := time.Now()
		_ = os.Chtimes(dir, now, now) // used now: last to be evicted
	}
	if _, err := os.Stat(dir); err == nil {
		hold()
		return dir, false, nil
	}
	tmp, err := os.MkdirTemp(c.dir, ".fetch-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(tmp)
	tarPath := filepath.Join(tmp, "skill.tar")
	f, err := os.Create(tarPath)
	if err != nil {
		return "", false, err
	}
	sum := sha256.New()
	err = fetch(io.MultiWriter(f, sum))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("fetch skill %s: %w", digest, err)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != h {
		return "", false, fmt.Errorf("fetch skill %s: the tar's digest is sha256:%s", digest, got)
	}
	tree := filepath.Join(tmp, "skill")
	if err := unpack(tarPath, tree); err != nil {
		return "", false, fmt.Errorf("unpack skill %s: %w", digest, err)
	}
	if err := os.Rename(tree, dir); err != nil {
		return "", false, err
	}
	hold()
	c.evict()
	return dir, true, nil
}

// unpack writes a canonical tar (skilltar's: regular files and
// directories, clean relative paths, modes 0755 or 0644) under dir,
// refusing anything else.
func unpack(tarPath, dir string) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(h.Name, "/")
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || strings.HasPrefix(name, "../") || name == ".." {
			return fmt.Errorf("entry %q is not a clean relative path", h.Name)
		}
		mode := os.FileMode(0o644)
		if h.Mode&0o111 != 0 {
			mode = 0o755
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.Mkdir(name, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
		case tar.TypeReg:
			out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q is neither a file nor a directory", h.Name)
		}
	}
}
