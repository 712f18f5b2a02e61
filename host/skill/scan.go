package skill

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skillhost/skillhost/host/internal/safeio"
)

// Options adjust how a bundle's scripts become tools.
type Options struct {
	// RequireExec keeps the reference implementation's rule: only files
	// with an execute bit are tools, and every other file in scripts/ is
	// skipped with a warning. By default a file with a known interpreter
	// extension (or a shebang) is a tool even without the bit, since
	// archives and git checkouts often lose it.
	RequireExec bool
}

// Limits of the scripts/ walk: real skills keep a few dozen files there;
// a bundle with thousands is not worth reading in full at every load.
const (
	maxScriptDepth = 4
	maxScriptFiles = 2000
	// MaxToolName is the longest tool name the common LLM APIs accept.
	MaxToolName = 64
)

// dataExts are files that live in scripts/ but are never run: schemas,
// templates, fixtures, archives, requirements lists.
var dataExts = map[string]bool{
	".txt": true, ".md": true, ".xml": true, ".xsd": true, ".json": true, ".yaml": true, ".yml": true,
	".toml": true, ".cfg": true, ".ini": true, ".csv": true, ".gz": true, ".tgz": true, ".zip": true,
	".tar": true, ".html": true, ".css": true, ".png": true, ".jpg": true, ".svg": true, ".ttf": true,
	".lock": true, ".pyc": true, ".map": true, ".d.ts": true,
}

// skippedDirs under scripts/ are caches and dependency trees, never tools.
var skippedDirs = map[string]bool{"__pycache__": true, "node_modules": true, ".git": true, "venv": true, ".venv": true}

// loadScripts fills Scripts and Tools from scripts/ and its
// subdirectories. A script in a subdirectory is named after its path
// (scripts/office/unpack.py: office_unpack); a name already taken gets the
// extension appended (pack_sh), then a number.
func (s *Skill) loadScripts(opts Options) {
	dir := filepath.Join(s.Dir, "scripts")
	fi, err := os.Lstat(dir)
	if err != nil {
		if !os.IsNotExist(err) {
			s.warn("scripts/: %v", err)
		}
		return
	}
	realDir := &resolved{path: s.Dir}
	if fi.Mode()&os.ModeSymlink != 0 {
		real, err := realDir.get()
		if err != nil {
			s.warn("skill directory: %v", err)
			return
		}
		// The same rule as for each script: nothing the host reads from
		// a skill may lie outside it.
		target, err := filepath.EvalSymlinks(dir)
		if err != nil {
			s.warn("scripts/: broken symlink: %v", err)
			return
		}
		if !inSkill(target, real) {
			s.refuse("scripts/ is a symlink that resolves outside the skill directory (%s); refusing it", target)
			return
		}
		dir = target
	}
	seen := map[string]string{}
	files := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(filepath.Join("scripts", rel))
		if err != nil {
			s.warn("%s: %v", rel, err)
			return nil
		}
		if d.IsDir() {
			if path == dir {
				return nil
			}
			switch {
			case strings.HasPrefix(d.Name(), "."):
				s.skip(rel+"/", "a hidden directory, not looked into", false)
				return filepath.SkipDir
			case skippedDirs[d.Name()]:
				s.skip(rel+"/", "a cache or dependency directory, not looked into", false)
				return filepath.SkipDir
			case strings.Count(rel, "/") > maxScriptDepth:
				s.skip(rel+"/", fmt.Sprintf("deeper than %d levels under scripts/, not looked into", maxScriptDepth), true)
				return filepath.SkipDir
			}
			return nil
		}
		if files++; files > maxScriptFiles {
			s.warn("scripts/: more than %d files; the rest are not looked at", maxScriptFiles)
			return filepath.SkipAll
		}
		s.addScript(path, rel, realDir, opts, seen)
		return nil
	})
}

// addScript decides whether one file under scripts/ is a tool, and
// records it in NotTools with the reason when it is not. A file with a
// shebang or the exec bit is a tool unless it is a data file, an
// __init__.py, a hidden file, or a Python file that provably does nothing
// when run (pythonSource); then it is also a warning, since its author
// marked it as a program. Without either, a file is a tool when its
// extension names an interpreter, with the same exception for Python.
func (s *Skill) addScript(path, rel string, realDir *resolved, opts Options, seen map[string]string) {
	base := filepath.Base(path)
	fi, ok := s.scriptInfo(rel, path, realDir)
	if !ok {
		return
	}
	s.Scripts = append(s.Scripts, path)
	exec := fi.Mode().Perm()&0o111 != 0
	head := readHead(path)
	interp, shebang := Shebang(head)
	_, known := interpreters[strings.ToLower(filepath.Ext(base))]
	marked := exec || shebang // its author means it to run
	switch {
	case opts.RequireExec && !exec:
		s.skip(rel, "not executable", true)
		return
	case strings.HasPrefix(base, ".") && ToolName(base) == "":
		s.skip(rel, "the file name gives an empty tool name", true)
		return
	case strings.HasPrefix(base, "."):
		s.skip(rel, "a hidden file", false)
		return
	case base == "__init__.py":
		s.skip(rel, "a package's __init__.py", false)
		return
	case isData(base) && len(interp) == 0:
		s.skip(rel, "a data file ("+dataExt(base)+")", exec)
		return
	case !marked && !known:
		s.skip(rel, "not a script (no shebang, exec bit or interpreter extension)", false)
		return
	case strings.EqualFold(filepath.Ext(base), ".py"):
		switch pythonVerdict(path, head) {
		case pyLibrary:
			s.skip(rel, reasonLibrary, marked)
			return
		case pyRefuses:
			s.skip(rel, reasonRefuses, marked)
			return
		}
	}
	name := uniqueName(strings.TrimPrefix(rel, "scripts/"), seen)
	if name == "" {
		s.skip(rel, "the file name gives an empty tool name", true)
		return
	}
	seen[name] = rel
	if len(interp) == 0 {
		interp = []string{interpreterFor(base)}
	}
	desc := Describe(head, base)
	if desc == "" {
		desc = strings.ReplaceAll(name, "_", " ") + " (" + rel + ")"
	}
	s.Tools = append(s.Tools, Tool{Name: name, Description: desc, Script: path, Rel: rel, Interpreter: interp})
}

// NotTool is a file under scripts/ that is not a tool.
type NotTool struct {
	// Rel is the file's path relative to the skill directory.
	Rel string `json:"path"`
	// Reason says why it is not a tool ("a data file (.xsd)").
	Reason string `json:"reason"`
	// Warned means the file is also a warning: it looks meant to run (a
	// shebang or the exec bit), or the operator's scripts.require_exec
	// left it out, or it could not be read.
	Warned bool `json:"warned"`
}

// CodeNotTools counts the files under scripts/ that are code but not
// tools: every warned one, Python libraries, and scripts whose __main__
// guard only refuses (not data files, hidden files or caches).
func (s *Skill) CodeNotTools() int {
	n := 0
	for _, nt := range s.NotTools {
		if nt.Warned || nt.Reason == reasonLibrary || nt.Reason == reasonRefuses {
			n++
		}
	}
	return n
}

// skip records a file under scripts/ that is not a tool; with warn, also
// as a warning ("scripts/x.py: not executable, skipping"), counted in
// Skipped.
func (s *Skill) skip(rel, reason string, warn bool) {
	s.NotTools = append(s.NotTools, NotTool{Rel: rel, Reason: reason, Warned: warn})
	if warn {
		s.Skipped++
		s.warn("%s: %s, skipping", rel, reason)
	}
}

// dataExt is the data extension base ends with.
func dataExt(base string) string {
	lower := strings.ToLower(base)
	best := ""
	for ext := range dataExts {
		if strings.HasSuffix(lower, ext) && len(ext) > len(best) {
			best = ext
		}
	}
	return best
}

func isData(base string) bool {
	lower := strings.ToLower(base)
	for ext := range dataExts {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// uniqueName derives a tool name from a path under scripts/ that no other
// tool of the skill has, at most MaxToolName characters.
func uniqueName(rel string, seen map[string]string) string {
	name := clip(ToolName(rel))
	if name == "" {
		return ""
	}
	if _, taken := seen[name]; !taken {
		return name
	}
	withExt := clip(toolChars(rel))
	if _, taken := seen[withExt]; !taken && withExt != "" {
		return withExt
	}
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		n := clip(name)
		if len(n)+len(suffix) > MaxToolName {
			n = n[:MaxToolName-len(suffix)]
		}
		if _, taken := seen[n+suffix]; !taken {
			return n + suffix
		}
	}
}

// toolChars is ToolName without removing the extension.
func toolChars(s string) string { return ToolName(s + ".x") }

func clip(name string) string {
	if len(name) > MaxToolName {
		return strings.TrimRight(name[:MaxToolName], "_")
	}
	return name
}

// readHead returns the beginning of a file: enough for its shebang, module
// docstring, header comments and, usually, its argparse description.
func readHead(path string) []byte {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, headerLimit))
	return b
}

// Shebang returns the interpreter a script's #! line names, split as the
// Linux kernel splits it: the program, then at most one argument, the rest
// of the line (inner spaces kept), separated by spaces or tabs. Unlike the
// kernel, it drops any surrounding white space (a CR of a CRLF line too) and
// skips a leading UTF-8 byte-order mark: the host runs the interpreter
// itself, so such a script runs although the kernel would refuse it. ok
// reports a #! line; interp is nil when it names nothing.
func Shebang(head []byte) (interp []string, ok bool) {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimPrefix(line, []byte("\ufeff"))
	if !bytes.HasPrefix(line, []byte("#!")) {
		return nil, false
	}
	rest := strings.TrimSpace(string(line[2:]))
	if rest == "" {
		return nil, true
	}
	i := strings.IndexAny(rest, " \t")
	if i < 0 {
		return []string{rest}, true
	}
	return []string{rest[:i], strings.TrimSpace(rest[i:])}, true
}

// scriptInfo stats one file under scripts/, refusing symlinks that leave
// the skill directory. Other non-regular files are skipped. Each file it
// turns down is in NotTools.
func (s *Skill) scriptInfo(rel, path string, realDir *resolved) (os.FileInfo, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		s.skip(rel, err.Error(), true)
		return nil, false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			s.skip(rel, "broken symlink", true)
			return nil, false
		}
		real, err := realDir.get()
		if err != nil {
			s.warn("skill directory: %v", err)
			return nil, false
		}
		if !inSkill(target, real) {
			s.NotTools = append(s.NotTools, NotTool{Rel: rel, Reason: "a symlink that resolves outside the skill directory", Warned: true})
			s.refuse("%s: symlink resolves outside the skill directory (%s), refusing it", rel, target)
			return nil, false
		}
		if fi, err = os.Stat(path); err != nil {
			s.skip(rel, err.Error(), true)
			return nil, false
		}
	}
	if !fi.Mode().IsRegular() {
		s.skip(rel, "not a regular file", false)
		return nil, false
	}
	return fi, true
}

// resolved is a path with its symlinks resolved on first use: only
// symlinks in a bundle are checked against its real directory, and most
// bundles have none, so a catalog load need not resolve every directory.
type resolved struct {
	path string
	done bool
	real string
	err  error
}

func (r *resolved) get() (string, error) {
	if !r.done {
		r.real, r.err = filepath.EvalSymlinks(r.path)
		r.done = true
	}
	return r.real, r.err
}
