package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/shared"
)

// InterpreterError is an interpreter that cannot be found or used: a
// configuration problem (exit status 2), not a failed script.
type InterpreterError struct{ Err error }

func (e *InterpreterError) Error() string { return e.Err.Error() }
func (e *InterpreterError) Unwrap() error { return e.Err }

// systemDirs are the trees every confining plugin lets scripts read and
// execute; an interpreter inside them needs nothing more.
func systemDirs() []string {
	if runtime.GOOS == "darwin" {
		return []string{"/usr", "/bin", "/sbin", "/System", "/Library/Apple", "/Library/Developer/CommandLineTools"}
	}
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
}

// Installation is where an interpreter really lives.
type Installation struct {
	// Program is the path the script's command names after a PATH lookup
	// (possibly a shim: ~/.pyenv/shims/python3).
	Program string `json:"program"`
	// Real is the executable that actually runs, shims and symlinks
	// resolved (~/.pyenv/versions/3.12.1/bin/python3.12).
	Real string `json:"real"`
	// Trees are the directories it needs to read and execute
	// (~/.pyenv/versions/3.12.1); empty for a system interpreter.
	Trees []string `json:"trees"`
	// Python reports a Python interpreter.
	Python bool `json:"python"`
}

type installKey struct{ program, dir string }

// interpCache remembers resolutions for the life of the host: asking a
// pyenv shim costs tens of milliseconds.
type interpCache struct {
	mu sync.Mutex
	m  map[installKey]Installation
}

// program returns the index in argv of the program an interpreter command
// runs: 0, or 1 for "/usr/bin/env NAME" (not for env -S or other options).
func programIndex(argv []string) int {
	if len(argv) >= 2 && filepath.Base(argv[0]) == "env" && !strings.HasPrefix(argv[1], "-") && !strings.Contains(argv[1], "=") {
		return 1
	}
	return 0
}

// command builds the argv, environment and extra read+execute trees of a
// tool call. The interpreter is looked up on the scripts' PATH. With
// sandbox.interpreters: auto, when the run is confined, a known interpreter
// found there outside the system directories (a pyenv, asdf, nvm, conda or
// Homebrew install, through its shim) is resolved to its real
// installation, which is run directly and granted read+execute, and whose
// bin directory leads the scripts' PATH so that a script calling python3
// again finds the same one. Python scripts get the skill directory on
// PYTHONPATH, so that "python -m scripts.x" style imports (from
// scripts.utils import ...) work. skillDir is s.Dir resolved once for the
// run (see Host.resolved), so that every use of it agrees.
//
// Only an interpreter the user's PATH names is resolved: a path a skill
// writes in its shebang, a program inside the skill or anywhere the grant
// lets scripts write, or a program that is not a known interpreter is
// never asked anything (the question runs unconfined) nor granted; doctor
// reports such a run with the line that would fix it.
func (h *Host) command(s *skill.Skill, skillDir string, t *skill.Tool, g grant.Grant, args, env []string, dir string, confined bool) ([]string, []string, []string, error) {
	argv := t.Command(args)
	i := programIndex(t.Interpreter)
	name := argv[i]
	prog, err := lookPath(name, env)
	if err != nil {
		return nil, nil, nil, &InterpreterError{fmt.Errorf("tool %s/%s: interpreter %w", s.Name, t.Name, err)}
	}
	if i == 0 {
		argv[0] = prog
	}
	var trees []string
	python := isPython(prog)
	if confined && h.autoInterpreters() && !strings.Contains(name, "/") && knownInterpreter(prog) &&
		!underSystem(prog) && !h.writableByScripts(prog, g, skillDir, s.Dir) {
		inst := h.install(prog, env, dir)
		trees, python = inst.Trees, inst.Python
		if inst.Real != prog && inst.Real != "" {
			argv[i] = inst.Real
			env = prependPath(env, filepath.Dir(inst.Real))
		}
	}
	if python {
		env = setEnv(env, "PYTHONPATH", joinList(skillDir, getEnv(env, "PYTHONPATH")))
		env = setEnv(env, "PYTHONDONTWRITEBYTECODE", "1") // the skill directory is read-only inside the sandbox
	}
	return argv, env, trees, nil
}

// writableByScripts reports whether a program lives where a skill could
// have put it: its own directory (skillDirs: as found and resolved, so that
// a program that cannot be resolved is still caught by its written path),
// or a path its grant lets it write.
func (h *Host) writableByScripts(prog string, g grant.Grant, skillDirs ...string) bool {
	real := prog
	if r, err := filepath.EvalSymlinks(prog); err == nil {
		real = r
	}
	roots := append(skillDirs, g.FSWrite...)
	return shared.UnderAny(real, roots) || shared.UnderAny(prog, roots)
}

// knownInterpreter reports whether prog is named like a language runtime:
// only those are resolved and granted automatically, so that a skill
// cannot get a tree granted by naming any program on the PATH.
func knownInterpreter(prog string) bool {
	base := filepath.Base(prog)
	if isPython(base) {
		return true
	}
	for _, p := range []string{"node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "bash", "zsh", "Rscript", "julia"} {
		if base == p || strings.HasPrefix(base, p) && strings.Trim(base[len(p):], "0123456789.") == "" {
			return true
		}
	}
	return false
}

// autoInterpreters reports whether sandbox.interpreters includes auto.
func (h *Host) autoInterpreters() bool {
	return slices.Contains(h.Config.Sandbox.Interpreters, config.InterpretersAuto)
}

// install resolves prog (run in dir with env) to its installation, once
// per host.
func (h *Host) install(prog string, env []string, dir string) Installation {
	key := installKey{prog, dir}
	h.interp.mu.Lock()
	defer h.interp.mu.Unlock()
	if inst, ok := h.interp.m[key]; ok {
		return inst
	}
	inst := resolveInstallation(prog, env, dir, h.env.Home)
	if h.interp.m == nil {
		h.interp.m = map[installKey]Installation{}
	}
	h.interp.m[key] = inst
	return inst
}

// resolveInstallation finds where prog really lives. A Python, Node, Ruby
// or Perl interpreter is asked (through its shim, which picks the version
// the way it would for the script), and granted the trees it reports:
// Python's prefix and base prefix (a virtual environment and its base), the
// others' installation (the parent of bin/). Anything else is followed
// through symlinks and granted the installation its binary sits in. The
// question runs unconfined but is fixed code, never the skill's.
func resolveInstallation(prog string, env []string, dir, home string) Installation {
	inst := Installation{Program: prog, Real: prog, Python: isPython(prog)}
	if r, err := filepath.EvalSymlinks(prog); err == nil {
		inst.Real = r
	}
	var query []string
	switch base := filepath.Base(prog); {
	case inst.Python:
		query = []string{"-c", "import sys; print(sys.executable); print(sys.prefix); print(sys.base_prefix)"}
	case base == "node" || base == "nodejs":
		query = []string{"-e", "console.log(process.execPath)"}
	case strings.HasPrefix(base, "ruby"):
		query = []string{"-e", "puts RbConfig.ruby"}
	case strings.HasPrefix(base, "perl"):
		query = []string{"-e", "print $^X, qq(\\n)"}
	}
	if query != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, prog, query...)
		cmd.Env, cmd.Dir = env, dir
		if out, err := cmd.Output(); err == nil {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) > 0 && filepath.IsAbs(lines[0]) {
				// Run the executable the interpreter names (a venv's python
				// must keep its path to find pyvenv.cfg), granting the
				// prefixes it reports, or the installation of the others.
				inst.Real = lines[0]
				for _, prefix := range lines[1:] {
					addTree(&inst.Trees, strings.TrimSpace(prefix))
				}
				if len(lines) == 1 {
					addTree(&inst.Trees, installRoot(inst.Real))
				}
			}
		}
	}
	// The binary that really runs (links resolved) must be readable too.
	if real, err := filepath.EvalSymlinks(inst.Real); err == nil {
		addTree(&inst.Trees, installRoot(real))
	}
	return inst
}

func addTree(trees *[]string, dir string) {
	if dir == "" || !filepath.IsAbs(dir) || dir == "/" || underSystem(dir) || slices.Contains(*trees, dir) {
		return
	}
	for _, t := range *trees {
		if shared.Under(dir, t) {
			return
		}
	}
	*trees = append(*trees, dir)
}

// installRoot is the tree an executable belongs to: the parent of its bin/
// directory, else its own directory.
func installRoot(exe string) string {
	d := filepath.Dir(exe)
	if filepath.Base(d) == "bin" {
		return filepath.Dir(d)
	}
	return d
}

func underSystem(path string) bool { return shared.UnderAny(path, systemDirs()) }

func isPython(path string) bool {
	base := filepath.Base(path)
	return base == "python" || strings.HasPrefix(base, "python3") || strings.HasPrefix(base, "python2") || base == "pypy3"
}

// managerDirs are the directories interpreter managers install into; a
// suggestion for sandbox.interpreters names the whole manager tree.
var managerDirs = []string{".pyenv", ".asdf", ".nvm", ".rbenv", ".volta", ".local", "miniconda3", "anaconda3", "miniforge3", ".conda", "homebrew", ".linuxbrew", "linuxbrew", ".rye", ".uv"}

// SuggestTree returns the tree to add to sandbox.interpreters so that a
// confined script can run path: under home, the top directory (~/.pyenv,
// which holds the shims and the versions they run); elsewhere an
// interpreter manager's directory (/opt/homebrew), else the installation
// (the parent of bin/).
func SuggestTree(path, home string) string {
	if home != "" && strings.HasPrefix(path, home+"/") {
		first, _, _ := strings.Cut(strings.TrimPrefix(path, home+"/"), "/")
		return "~/" + first
	}
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if slices.Contains(managerDirs, p) {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return installRoot(path)
}

func getEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

func setEnv(env []string, name, value string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(out, name+"="+value)
}

func prependPath(env []string, dir string) []string {
	return setEnv(env, "PATH", joinList(dir, getEnv(env, "PATH")))
}

func joinList(first, rest string) string {
	if rest == "" {
		return first
	}
	for _, p := range filepath.SplitList(rest) {
		if p == first {
			return rest
		}
	}
	return first + string(os.PathListSeparator) + rest
}
