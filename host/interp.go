package host

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/safeio"
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

// interpCache remembers resolutions for the life of the host.
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

// scriptCommand is how a tool call starts: its command line, its
// environment, and the interpreter's installation trees it is granted to
// read and execute.
type scriptCommand struct {
	argv, env, trees []string
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
// lets scripts write, or a program that is not a known interpreter is never
// granted; doctor reports such a run with the line that would fix it.
// Resolving never runs anything (see resolveInstallation): nothing a run
// could have written ever executes outside a sandbox.
func (h *Host) command(s *skill.Skill, skillDir string, t *skill.Tool, g grant.Grant, args, env []string, dir string, confined bool) (scriptCommand, error) {
	argv := t.Command(args)
	i := programIndex(t.Interpreter)
	name := argv[i]
	pick := h.pickedInterpreter(s, name)
	if pick != "" {
		name = pick // the operator's pick for this skill, resolved as a PATH-named one is
	}
	prog, err := lookPath(name, env)
	if err != nil {
		return scriptCommand{}, &InterpreterError{fmt.Errorf("tool %s/%s: interpreter %w", s.Name, t.Name, err)}
	}
	if i == 0 || pick != "" {
		argv[i] = prog // env would look a picked interpreter up by name again
	}
	var trees []string
	python := isPython(prog)
	if confined && h.autoInterpreters() && (pick != "" || !strings.Contains(name, "/")) && knownInterpreter(prog) &&
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
	return scriptCommand{argv, env, trees}, nil
}

// pickedInterpreter is the interpreter the operator picked for s
// (skills.grants.NAME.interpreter), ~ expanded, when it is of the same
// language as name; else "".
func (h *Host) pickedInterpreter(s *skill.Skill, name string) string {
	pick := h.operatorGrant(s).Interpreter
	if pick == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(pick, "~/"); ok && h.env.Home != "" {
		pick = filepath.Join(h.env.Home, rest)
	}
	same := isPython(name) && isPython(pick)
	for _, lang := range []string{"node", "ruby", "perl", "bash"} {
		same = same || strings.HasPrefix(filepath.Base(name), lang) && strings.HasPrefix(filepath.Base(pick), lang)
	}
	if !same {
		return ""
	}
	return pick
}

// writableByScripts reports whether a program lives where a skill could
// have put it: its own directory (skillDirs: as found and resolved, so that
// a program that cannot be resolved is still caught by its written path),
// a path its grant lets it write, or a tree any configured grant does.
func (h *Host) writableByScripts(prog string, g grant.Grant, skillDirs ...string) bool {
	real := prog
	if r, err := filepath.EvalSymlinks(prog); err == nil {
		real = r
	}
	roots := append(skillDirs, g.FSWrite...)
	if shared.UnderAny(real, roots) || shared.UnderAny(prog, roots) {
		return true
	}
	// Any run may have written there: a link planted in a venv would
	// steer which tree this run is granted.
	tree, _ := writableIn(h.writableTrees(), prog)
	return tree != ""
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

// resolveInstallation finds where prog really lives without running
// anything: executing an interpreter (or letting it read its start-up files,
// .pth and sitecustomize) outside the sandbox would run whatever a
// confined run planted in a tree it could write. It reads what the
// managers themselves read: a version manager's shim (pyenv, rbenv,
// nodenv, asdf) is resolved from its version variable, the nearest version
// file above dir, or the manager's global one; a virtual environment from
// its pyvenv.cfg (its prefix and its base installation are both granted,
// and it runs through its own path so that Python finds pyvenv.cfg);
// anything else is followed through symlinks and granted the installation
// its binary sits in.
func resolveInstallation(prog string, env []string, dir, home string) Installation {
	inst := Installation{Program: prog, Real: prog, Python: isPython(prog)}
	shim, fromShim := resolveShim(prog, env, dir, home)
	if fromShim {
		// Run as the manager would: by the version's own path.
		inst.Real = shim
		addTree(&inst.Trees, installRoot(shim))
	}
	if venv := venvRoot(inst.Real); venv != "" {
		// Keep the venv's own path: Python finds pyvenv.cfg beside it.
		addTree(&inst.Trees, venv)
		if base := venvBase(venv); base != "" {
			addTree(&inst.Trees, base)
		}
	} else if r, err := filepath.EvalSymlinks(inst.Real); err == nil && !fromShim {
		inst.Real = r
	}
	// The binary that really runs (links resolved) must be readable too.
	if real, err := filepath.EvalSymlinks(inst.Real); err == nil {
		addTree(&inst.Trees, installRoot(real))
	}
	return inst
}

// versionManager describes a shim-based version manager: its shims live
// in <root>/shims, its versions in <root>/<versions>/<version>.
type versionManager struct {
	envVar, file, versions, plugin string
}

// managerFor names the version manager whose shims a program of base name
// would be, by the language it runs; asdf is recognised by its layout.
func managerFor(base string) (versionManager, bool) {
	switch {
	case isPython(base):
		return versionManager{envVar: "PYENV_VERSION", file: ".python-version", versions: "versions", plugin: "python"}, true
	case strings.HasPrefix(base, "ruby"):
		return versionManager{envVar: "RBENV_VERSION", file: ".ruby-version", versions: "versions", plugin: "ruby"}, true
	case base == "node" || base == "nodejs":
		return versionManager{envVar: "NODENV_VERSION", file: ".node-version", versions: "versions", plugin: "nodejs"}, true
	}
	return versionManager{}, false
}

// maxVersionFile bounds what is read of a version file.
const maxVersionFile = 4096

// resolveShim resolves prog when it is a version manager's shim
// (<root>/shims/<name>) to the program the shim would run, reading only
// the files the manager reads. A version name that is not a plain name
// (a path, "..") is ignored; "system" means the next program of that name
// on PATH after the shims.
func resolveShim(prog string, env []string, dir, home string) (string, bool) {
	shims := filepath.Dir(prog)
	if filepath.Base(shims) != "shims" {
		return "", false
	}
	root, base := filepath.Dir(shims), filepath.Base(prog)
	m, ok := managerFor(base)
	if !ok {
		return "", false
	}
	asdf := isDir(filepath.Join(root, "installs"))
	var versions []string
	if asdf {
		versions = asdfVersions(m.plugin, env, dir, home)
	} else {
		versions = managerVersions(m, root, env, dir)
	}
	for _, v := range versions {
		if v == "system" {
			if p, err := lookPath(base, setEnv(env, "PATH", withoutDir(getEnv(env, "PATH"), shims))); err == nil {
				return p, true
			}
			continue
		}
		candidate := filepath.Join(root, m.versions, v, "bin", base)
		if asdf {
			candidate = filepath.Join(root, "installs", m.plugin, v, "bin", base)
		}
		if fi, err := os.Stat(candidate); err == nil && !fi.IsDir() {
			return candidate, true
		}
	}
	return "", false
}

// managerVersions lists the versions a pyenv-style manager would try, in
// its order: the variable, the nearest version file above dir, the global
// file.
func managerVersions(m versionManager, root string, env []string, dir string) []string {
	if v := getEnv(env, m.envVar); v != "" {
		return versionNames(strings.ReplaceAll(v, ":", " "))
	}
	for d := dir; d != "" && filepath.IsAbs(d); d = filepath.Dir(d) {
		if text, ok := readSmall(filepath.Join(d, m.file)); ok {
			return versionNames(text)
		}
		if d == "/" {
			break
		}
	}
	if text, ok := readSmall(filepath.Join(root, "version")); ok {
		return versionNames(text)
	}
	return nil
}

// asdfVersions lists the versions asdf would try for plugin.
func asdfVersions(plugin string, env []string, dir, home string) []string {
	if v := getEnv(env, "ASDF_"+strings.ToUpper(plugin)+"_VERSION"); v != "" {
		return versionNames(v)
	}
	dirs := []string{}
	for d := dir; d != "" && filepath.IsAbs(d); d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == "/" {
			break
		}
	}
	if home != "" {
		dirs = append(dirs, home)
	}
	for _, d := range dirs {
		text, ok := readSmall(filepath.Join(d, ".tool-versions"))
		if !ok {
			continue
		}
		for _, line := range strings.Split(text, "\n") {
			fields := strings.Fields(line)
			if len(fields) > 1 && fields[0] == plugin {
				return versionNames(strings.Join(fields[1:], " "))
			}
		}
	}
	return nil
}

// versionNames splits a version file into names, dropping comments and
// anything that is not a plain name.
func versionNames(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, v := range strings.Fields(line) {
			if v != "." && v != ".." && !strings.ContainsAny(v, "/\\") {
				out = append(out, v)
			}
		}
	}
	return out
}

// readSmall reads the start of a regular file, never a FIFO or device
// (which could block), nor through a final symlink: version files and
// pyvenv.cfg may lie where runs write.
func readSmall(path string) (string, bool) {
	f, err := safeio.OpenRegularNoFollow(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, maxVersionFile)
	n, _ := io.ReadFull(f, buf)
	return string(buf[:n]), true
}

// venvRoot returns the virtual environment exe belongs to (the parent of
// its bin/ holding pyvenv.cfg), or "".
func venvRoot(exe string) string {
	d := filepath.Dir(exe)
	if filepath.Base(d) != "bin" {
		return ""
	}
	root := filepath.Dir(d)
	if fi, err := os.Stat(filepath.Join(root, "pyvenv.cfg")); err == nil && fi.Mode().IsRegular() {
		return root
	}
	return ""
}

// venvBase reads the base installation of the virtual environment at root
// from its pyvenv.cfg ("home = /usr/local/bin").
func venvBase(root string) string {
	text, ok := readSmall(filepath.Join(root, "pyvenv.cfg"))
	if !ok {
		return ""
	}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "home" {
			continue
		}
		home := strings.TrimSpace(v)
		if !filepath.IsAbs(home) {
			return ""
		}
		if r, err := filepath.EvalSymlinks(home); err == nil {
			home = r
		}
		if filepath.Base(home) == "bin" {
			return filepath.Dir(home)
		}
		return home
	}
	return ""
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// withoutDir removes dir from a PATH list.
func withoutDir(list, dir string) string {
	var keep []string
	for _, p := range filepath.SplitList(list) {
		if filepath.Clean(p) != filepath.Clean(dir) {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
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

func getEnv(env []string, name string) string { return shared.EnvValue(env, name) }

func setEnv(env []string, name, value string) []string { return shared.WithEnv(env, name, value) }

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
