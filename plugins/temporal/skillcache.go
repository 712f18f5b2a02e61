package temporal

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// skillCache keeps skills on a worker's disk by digest: each one unpacked
// once, after its tar was checked against the digest, into a directory
// named after it, read-only.
type skillCache struct {
	dir string
	mu  sync.Mutex
	// busy serialises fetches of the same digest.
	busy map[string]*sync.Mutex
}

func newSkillCache(dir string) (*skillCache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("skill cache %s: %w", dir, err)
	}
	return &skillCache{dir: dir, busy: map[string]*sync.Mutex{}}, nil
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
// says whether it did.
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
	if _, err := os.Stat(dir); err == nil {
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
