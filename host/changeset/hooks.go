package changeset

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/skillhost/skillhost/host/internal/safeio"
)

// GitHooks returns a Policy.Hooks that reads core.hooksPath from the
// repository whose work tree is dir (its .git directory, or the one a .git
// file names, and that one's commondir), falling back to the user's global
// files (global, e.g. ~/.gitconfig): the hook directory git would run from,
// made absolute against dir. Results are cached per directory.
func GitHooks(global []string) func(dir string) []string {
	var mu sync.Mutex
	cache := map[string][]string{}
	var globalHooks string
	for _, g := range global {
		if h := hooksPathIn(g); h != "" {
			globalHooks = h
		}
	}
	return func(dir string) []string {
		mu.Lock()
		defer mu.Unlock()
		if h, ok := cache[dir]; ok {
			return h
		}
		var out []string
		if gitDir := gitDirOf(dir); gitDir != "" {
			h := globalHooks
			for _, cfg := range configFiles(gitDir) {
				if v := hooksPathIn(cfg); v != "" {
					h = v
				}
			}
			if h != "" {
				if strings.HasPrefix(h, "~/") {
					if home, err := os.UserHomeDir(); err == nil {
						h = filepath.Join(home, h[2:])
					}
				}
				if !filepath.IsAbs(h) {
					h = filepath.Join(dir, h)
				}
				out = append(out, filepath.Clean(h))
			}
		}
		cache[dir] = out
		return out
	}
}

// gitDirOf returns the git directory of the work tree dir, or "".
func gitDirOf(dir string) string {
	dot := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		return dot
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return ""
	}
	data, err := readSmall(dot)
	if err != nil {
		return ""
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	g := strings.TrimSpace(line)
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	return g
}

// configFiles are the configuration files git reads for gitDir: the common
// directory's config, then the worktree's own.
func configFiles(gitDir string) []string {
	files := []string{}
	if data, err := readSmall(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		files = append(files, filepath.Join(common, "config"))
	}
	files = append(files, filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree"))
	return files
}

// hooksPathIn reads core.hooksPath from the git configuration file path:
// the last value wins, as in git.
func hooksPathIn(path string) string {
	f, err := safeio.OpenRegularNoFollow(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var section, value string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.Index(line, "]")
			if end < 0 {
				continue
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			line = strings.TrimSpace(line[end+1:])
		}
		if section != "core" || line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "hookspath") {
			continue
		}
		v = strings.TrimSpace(v)
		if rest, ok := strings.CutPrefix(v, `"`); ok {
			if end := strings.Index(rest, `"`); end >= 0 {
				v = rest[:end]
			}
		} else if i := strings.IndexAny(v, "#;"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		value = v
	}
	return value
}

// readSmall reads up to 4 KiB of a regular file, not through a final link
// and without waiting on a FIFO: these files are the repository's, and a
// run with direct writes may have left anything there.
func readSmall(path string) ([]byte, error) {
	f, err := safeio.OpenRegularNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 4096))
}
