// Package sandbox finds sandbox plugin binaries, launches and supervises
// them, and picks the strategy for a run.
package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/shared/pluginclient"
)

// BinaryPrefix starts the file name of every sandbox plugin:
// skillhost-sandbox-<name>.
const BinaryPrefix = pluginclient.BinaryPrefix

// Candidate is a plugin binary found on disk.
type Candidate struct {
	Name string
	Path string
}

// DefaultDirs returns where plugins are looked for when plugins.dirs is not
// set: the directory holding the skillhost executable, then
// $XDG_DATA_HOME/skillhost/plugins (~/.local/share/skillhost/plugins).
func DefaultDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dirs = append(dirs, filepath.Dir(exe))
	}
	// A program run with go run lives in a temporary directory: the
	// plugins `make build` put in the module's bin/ are the ones meant.
	if bin := moduleBin(); bin != "" && !slices.Contains(dirs, bin) {
		dirs = append(dirs, bin)
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		if home, err := os.UserHomeDir(); err == nil {
			data = filepath.Join(home, ".local", "share")
		}
	}
	if data != "" {
		dirs = append(dirs, filepath.Join(data, "skillhost", "plugins"))
	}
	return dirs
}

// Discover lists the plugins in dirs. The first directory wins for a name;
// directories, non-executables and shadowed binaries are skipped with a
// warning. Missing directories are skipped silently unless strict.
func Discover(dirs []string, strict bool) (map[string]Candidate, []string) {
	found := map[string]Candidate{}
	var warnings []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if strict || !errors.Is(err, os.ErrNotExist) {
				warnings = append(warnings, fmt.Sprintf("plugin directory %s: %v", dir, errors.Unwrap(err)))
			}
			continue
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), BinaryPrefix) {
				continue
			}
			name := strings.TrimSuffix(strings.TrimPrefix(e.Name(), BinaryPrefix), ".exe")
			path := filepath.Join(dir, e.Name())
			fi, err := os.Stat(path)
			switch {
			case err != nil:
				warnings = append(warnings, fmt.Sprintf("plugin %s: %v; skipping", path, err))
				continue
			case fi.IsDir():
				warnings = append(warnings, fmt.Sprintf("plugin %s is a directory; skipping", path))
				continue
			case fi.Mode().Perm()&0o111 == 0:
				warnings = append(warnings, fmt.Sprintf("plugin %s is not executable; skipping", path))
				continue
			case name == "":
				continue
			}
			if first, dup := found[name]; dup {
				warnings = append(warnings, fmt.Sprintf("plugin %s is shadowed by %s (the first directory wins)", path, first.Path))
				continue
			}
			found[name] = Candidate{Name: name, Path: path}
		}
	}
	return found, warnings
}

// Names returns the candidates' names, sorted.
func Names(c map[string]Candidate) []string { return slices.Sorted(maps.Keys(c)) }

// moduleBin is the bin/ directory of the Go module the working directory
// is in (the nearest parent holding go.mod), if it exists.
func moduleBin() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			bin := filepath.Join(dir, "bin")
			if fi, err := os.Stat(bin); err == nil && fi.IsDir() {
				return bin
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
