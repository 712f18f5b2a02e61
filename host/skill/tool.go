package skill

import (
	"path/filepath"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// Tool is one executable script of a skill, offered to an agent as a tool
// with a single optional string parameter "args".
type Tool struct {
	// Name is derived from the file name (check-deploy.sh: check_deploy).
	Name string
	// Description is the script's first header comment, or Name.
	Description string
	// Script is the absolute path of the script, and Rel the same path
	// relative to the skill directory (scripts/office/unpack.py).
	Script string
	Rel    string
	// Interpreter is the command that runs the script: its shebang line,
	// or a choice by extension. Interpreter[0] may be a bare name that is
	// looked up on PATH when the tool runs.
	Interpreter []string
}

// Parameters returns the JSON Schema of the tool's arguments: either args,
// one string split like a POSIX shell, or argv, the exact arguments.
func (t Tool) Parameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"args": map[string]any{
				"type":        "string",
				"description": "Optional command-line arguments, split like a POSIX shell (quotes honoured, no expansion)",
			},
			"argv": map[string]any{
				"type":        "array",
				"items":       map[string]any{"type": "string"},
				"description": "Optional exact arguments, one per element, passed without any splitting; use instead of args",
			},
		},
		"required":             []string{},
		"additionalProperties": false,
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

// inSkill reports whether target, a path with its symlinks resolved, lies
// in dir, the skill's resolved directory, on a component boundary. Both are
// clean absolute paths (EvalSymlinks of absolute ones), as shared.Under
// wants. A skill whose directory is the filesystem root holds nothing a
// symlink may point to: every path is under /, and a check that passes
// everything checks nothing.
func inSkill(target, dir string) bool {
	return dir != "/" && shared.Under(target, dir)
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
