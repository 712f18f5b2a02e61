package skill

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Tool is one executable script of a skill, offered to an agent as a tool
// with a single optional string parameter "args".
type Tool struct {
	// Name is derived from the file name (check-deploy.sh: check_deploy).
	Name string
	// Description is the script's first header comment, or Name.
	Description string
	// Script is the absolute path of the script.
	Script string
	// Interpreter is the command that runs the script: its shebang line,
	// or a choice by extension. Interpreter[0] may be a bare name that is
	// looked up on PATH when the tool runs.
	Interpreter []string
}

// Parameters returns the JSON schema of the tool's arguments.
func (t Tool) Parameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"args": map[string]any{
				"type":        "string",
				"description": "Optional command-line arguments, split like a POSIX shell (quotes honoured, no expansion)",
			},
		},
		"required": []string{},
	}
}

// Command returns the argv that runs the tool with args. The script is
// passed to its interpreter directly, never through a shell string.
func (t Tool) Command(args []string) []string {
	argv := make([]string, 0, len(t.Interpreter)+1+len(args))
	argv = append(argv, t.Interpreter...)
	argv = append(argv, t.Script)
	return append(argv, args...)
}

// interpreters by extension, for scripts without a shebang.
var interpreters = map[string]string{
	".sh":  "bash",
	".py":  "python3",
	".js":  "node",
	".mjs": "node",
	".rb":  "ruby",
	".pl":  "perl",
}

// headerLimit bounds how much of a script is read for its shebang and
// description.
const headerLimit = 16 << 10

// loadScripts fills Scripts and Tools from the scripts/ folder.
func (s *Skill) loadScripts() {
	dir := filepath.Join(s.Dir, "scripts")
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !os.IsNotExist(err) {
			s.warn("scripts/: %v", err)
		}
		return
	}
	// The skill directory's real path is needed only to check symlinked
	// scripts; most skills have none, so it is resolved on first need
	// (it costs a stat per path component).
	var realDir string
	var realErr error
	resolved := false
	real := func() (string, error) {
		if !resolved {
			realDir, realErr = filepath.EvalSymlinks(s.Dir)
			resolved = true
		}
		return realDir, realErr
	}
	seen := map[string]string{}
	for _, e := range entries { // ReadDir sorts by name
		rel := "scripts/" + e.Name()
		path := filepath.Join(dir, e.Name())
		fi, ok := s.scriptInfo(rel, path, real)
		if !ok {
			if realErr != nil {
				s.warn("skill directory: %v", realErr)
				return
			}
			continue
		}
		s.Scripts = append(s.Scripts, path)
		if fi.Mode().Perm()&0o111 == 0 {
			s.warn("%s: not executable, skipping", rel)
			continue
		}
		name := ToolName(e.Name())
		if name == "" {
			s.warn("%s: the file name gives an empty tool name, skipping", rel)
			continue
		}
		if first, dup := seen[name]; dup {
			s.warn("%s: tool name %q is already taken by %s, skipping", rel, name, first)
			continue
		}
		seen[name] = rel
		interp, desc := readHeader(path)
		if len(interp) == 0 {
			interp = []string{interpreterFor(e.Name())}
		}
		if desc == "" {
			desc = name
		}
		s.Tools = append(s.Tools, Tool{Name: name, Description: desc, Script: path, Interpreter: interp})
	}
}

// scriptInfo stats one entry of scripts/, refusing symlinks that leave the
// skill directory. Directories and other non-regular files are skipped.
func (s *Skill) scriptInfo(rel, path string, real func() (string, error)) (os.FileInfo, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		s.warn("%s: %v", rel, err)
		return nil, false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		realDir, err := real()
		if err != nil {
			return nil, false
		}
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			s.warn("%s: broken symlink, skipping", rel)
			return nil, false
		}
		if !within(target, realDir) {
			s.warn("%s: symlink resolves outside the skill directory (%s), refusing it", rel, target)
			return nil, false
		}
		if fi, err = os.Stat(path); err != nil {
			s.warn("%s: %v", rel, err)
			return nil, false
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, false
	}
	return fi, true
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// ToolName derives a tool name from a script file name: the last extension
// is removed, every run of characters other than ASCII letters and digits
// becomes "_", and leading and trailing "_" are trimmed.
func ToolName(file string) string {
	if ext := filepath.Ext(file); ext != "" && ext != file {
		file = strings.TrimSuffix(file, ext)
	} else if ext == file {
		file = ""
	}
	var b strings.Builder
	pendingSep := false
	for _, r := range file {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			b.WriteRune(r)
			continue
		}
		pendingSep = true
	}
	return b.String()
}

func interpreterFor(file string) string {
	if i, ok := interpreters[strings.ToLower(filepath.Ext(file))]; ok {
		return i
	}
	return "bash"
}

// readHeader returns the shebang interpreter (as the kernel splits it: the
// program and at most one argument) and the description: the first comment
// line of the header that is not a shebang or an editor/linter directive.
// Only the leading comment block is read, so a comment deep in the code
// never becomes the description.
func readHeader(path string) (interp []string, desc string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, headerLimit))
	sc.Buffer(make([]byte, 4096), headerLimit)
	first := true
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if first {
			first = false
			if strings.HasPrefix(line, "#!") {
				interp = strings.SplitN(strings.TrimSpace(line[2:]), " ", 2)
				if len(interp) == 2 {
					interp[1] = strings.TrimSpace(interp[1])
					if interp[1] == "" {
						interp = interp[:1]
					}
				}
				if interp[0] == "" {
					interp = nil
				}
				continue
			}
		}
		if line == "" {
			continue
		}
		text, ok := commentText(line)
		if !ok {
			break // end of the header
		}
		if text != "" && !isDirective(text) {
			return interp, text
		}
	}
	return interp, ""
}

func commentText(line string) (string, bool) {
	switch {
	case strings.HasPrefix(line, "#!"):
		return "", true
	case strings.HasPrefix(line, "#"):
		return strings.TrimSpace(strings.TrimLeft(line, "#")), true
	case strings.HasPrefix(line, "//"):
		return strings.TrimSpace(strings.TrimLeft(line, "/")), true
	}
	return "", false
}

// isDirective recognises comment lines meant for tools, not readers.
func isDirective(text string) bool {
	lower := strings.ToLower(text)
	return strings.HasPrefix(lower, "-*-") || strings.HasPrefix(lower, "shellcheck ") ||
		strings.HasPrefix(lower, "vim:") || strings.HasPrefix(lower, "coding:") ||
		strings.HasPrefix(lower, "coding=") || strings.HasPrefix(lower, "eslint") ||
		strings.HasPrefix(lower, "@ts-") || strings.HasPrefix(lower, "/ <reference")
}
