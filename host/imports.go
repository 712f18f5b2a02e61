package host

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillhost/skillhost/host/internal/safeio"
)

// importCheck is the Python that reports which of the modules named in
// argv (after the script's directory, which a script run finds modules in
// first) cannot be found, one per line. A submodule (pypdf.annotations) is
// looked for in its package, which finding it imports: a package that
// cannot be imported for another reason than a missing module is not
// reported, the check cannot tell.
const importCheck = `import importlib.util, sys
sys.path.insert(0, sys.argv[1])
for m in sys.argv[2:]:
    try:
        found = importlib.util.find_spec(m) is not None
    except ImportError:
        found = False
    except Exception:
        found = "." in m
    if not found:
        print("MISSING", m)
`

// checkImports checks, for a Python tool that a confining strategy runs,
// that its interpreter finds the modules the script imports at top level.
// The question runs in the sandbox, with no write grant: the interpreter
// reads its start-up files (.pth) there, never outside. When modules are
// missing it says so, and which other python3 on PATH has them.
func (h *Host) checkImports(ctx context.Context, p *prepared, prog string, pr *Prediction) {
	if !pr.OK || !isPython(prog) || !p.confines {
		return
	}
	mods := topImports(p.tool.Script)
	if len(mods) == 0 {
		return
	}
	missing, err := h.missingModules(ctx, p, prog, nil, mods)
	if err != nil || len(missing) == 0 {
		return
	}
	missing = withoutSubmodulesOf(missing)
	pr.OK = false
	pr.Problem = fmt.Sprintf("%s cannot import %s", prog, strings.Join(missing, ", "))
	pr.Fix = fmt.Sprintf("install them for %s", prog)
	if fix := h.otherPythonFix(ctx, p, prog, missing); fix != "" {
		pr.Fix = fix
	}
}

// withoutSubmodulesOf drops from missing each submodule of a package that
// is missing too: "pypdf" says it all, "pypdf.annotations" adds nothing.
func withoutSubmodulesOf(missing []string) []string {
	return slices.DeleteFunc(slices.Clone(missing), func(m string) bool {
		for _, other := range missing {
			if strings.HasPrefix(m, other+".") {
				return true
			}
		}
		return false
	})
}

// otherPythonFix returns the configuration line that gives the skill an
// interpreter with the modules, when another python3 on the scripts' PATH
// (or /usr/bin/python3) finds them all in the sandbox, or "".
func (h *Host) otherPythonFix(ctx context.Context, p *prepared, prog string, missing []string) string {
	for _, other := range otherPythons(p.request.Env, prog) {
		trees := resolveInstallation(other, p.request.Env, p.request.Dir, h.env.Home).Trees
		if still, err := h.missingModules(ctx, p, other, trees, missing); err == nil && len(still) == 0 {
			return fmt.Sprintf("%s has them: set skills.grants.%s.interpreter: %s in the configuration, or put %s first on the PATH skillhost runs with", other, p.skill.Name, other, filepath.Dir(other))
		}
	}
	return ""
}

// moduleNotFound is the line Python ends with when an import fails for a
// module it cannot find.
var moduleNotFound = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^ModuleNotFoundError: No module named '([A-Za-z_][A-Za-z0-9_.]*)'`)
})

// MissingModule returns the module a Python traceback in output says
// could not be found (the last one), or "".
func MissingModule(output string) string {
	ms := moduleNotFound().FindAllStringSubmatch(output, -1)
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1][1]
}

// ImportAdvice reads a finished run of req for Python's ModuleNotFoundError
// and returns the one line that names the fix doctor would give, when the
// interpreter check knows one: another python3 on the scripts' PATH (or
// /usr/bin/python3) finds the module in the sandbox, and the line is the
// configuration that picks it (skills.grants.NAME.interpreter). It returns
// "" for a run that succeeded, a script that is not run by Python, a run
// that is not confined (the check runs the other interpreter only in the
// sandbox) or a module no other interpreter has. The check runs the other
// interpreters, confined, with no write grant, for up to 30 seconds each.
//
// The CLI writes it as a warning after a failed run:
//
//	if advice := h.ImportAdvice(ctx, req, res); advice != "" {
//		h.Warn("%s", advice)
//	}
func (h *Host) ImportAdvice(ctx context.Context, req RunRequest, res *RunReport) string {
	if res == nil || res.OK() {
		return ""
	}
	mod := MissingModule(res.Text())
	if mod == "" {
		return ""
	}
	p, err := h.prepare(req)
	if err != nil || !p.confines {
		return ""
	}
	prog := runProgram(p)
	if !isPython(prog) {
		return ""
	}
	fix := h.otherPythonFix(ctx, p, prog, []string{mod})
	if fix == "" {
		return ""
	}
	fix = strings.Replace(fix, " has them: ", " has it: ", 1)
	return fmt.Sprintf("%s/%s: %s cannot import %s; %s", p.skill.Name, p.tool.Name, prog, mod, fix)
}

// runProgram is the program a prepared run starts (the interpreter, past
// env), looked up on the scripts' PATH.
func runProgram(p *prepared) string {
	argv := p.request.Argv
	prog := argv[programIndex(argv)]
	if !filepath.IsAbs(prog) {
		if found, err := lookPath(prog, p.request.Env); err == nil {
			prog = found
		}
	}
	return prog
}

// missingModules runs importCheck with python, as the tool's run would be
// confined but with no write grant, and returns the modules not found.
func (h *Host) missingModules(ctx context.Context, p *prepared, python string, trees, mods []string) ([]string, error) {
	req := p.request
	req.RunID = newRunID()
	req.Argv = append([]string{python, "-c", importCheck, filepath.Dir(p.tool.Script)}, mods...)
	req.Grant.FSWrite, req.Grant.Protected = nil, nil
	req.Grant.Timeout = 30 * time.Second
	req.ExecPaths = append(slices.Clone(req.ExecPaths), trees...)
	req.OutputLimit = 64 << 10
	var out bytes.Buffer
	res, err := p.exec.Execute(ctx, req, func(b []byte) error { out.Write(b); return nil })
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("import check exited %d: %s", res.ExitCode, out.String())
	}
	var missing []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "MISSING "); ok {
			missing = append(missing, m)
		}
	}
	return missing, nil
}

// topImports reads the modules a Python script imports at its top level
// (no indentation): "import a.b, c as d" gives a, a.b and c, "from e.f
// import g" gives e and e.f (g may be a name, not a module); relative
// imports are the skill's own. A package comes before its submodules.
func topImports(script string) []string {
	f, err := safeio.OpenRegular(script)
	if err != nil {
		return nil
	}
	defer f.Close()
	var mods []string
	add := func(name string) {
		parts := strings.Split(strings.TrimSpace(name), ".")
		if parts[0] == "__future__" {
			return
		}
		for i := range parts {
			if !isIdentifier(parts[i]) {
				return
			}
			if m := strings.Join(parts[:i+1], "."); !slices.Contains(mods, m) {
				mods = append(mods, m)
			}
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "import "); ok {
			rest, _, _ = strings.Cut(rest, "#")
			for _, part := range strings.Split(rest, ",") {
				name, _, _ := strings.Cut(strings.TrimSpace(part), " ")
				add(name)
			}
		} else if rest, ok := strings.CutPrefix(line, "from "); ok {
			name, _, _ := strings.Cut(rest, " ")
			if !strings.HasPrefix(name, ".") {
				add(name)
			}
		}
	}
	return mods
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if r != '_' && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z') && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// otherPythons lists the python3 programs on env's PATH other than prog
// (by real path), and the system's /usr/bin/python3.
func otherPythons(env []string, prog string) []string {
	self, _ := filepath.EvalSymlinks(prog)
	var out, seen []string
	for _, dir := range append(filepath.SplitList(getEnv(env, "PATH")), "/usr/bin") {
		cand := filepath.Join(dir, "python3")
		fi, err := os.Stat(cand)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(cand)
		if err != nil || real == self || slices.Contains(seen, real) || filepath.Base(filepath.Dir(cand)) == "shims" {
			continue
		}
		seen = append(seen, real)
		out = append(out, cand)
	}
	return out
}

// MissingPrograms checks, for every tool of every loaded skill, the
// programs its script runs by name (see scriptPrograms) and returns one
// line for each that is not on the scripts' PATH: the run would fail, or
// take a path the script has for a missing program, when it gets there.
func (h *Host) MissingPrograms() []string {
	var out []string
	for _, s := range h.Catalog.All() {
		for _, t := range s.Tools {
			progs := scriptPrograms(t.Script, t.Interpreter)
			if len(progs) == 0 {
				continue
			}
			p, err := h.prepare(RunRequest{Skill: s.Name, Tool: t.Name})
			if err != nil {
				continue // doctor's prediction reports it
			}
			for _, prog := range progs {
				if _, err := lookPath(prog, p.request.Env); err != nil {
					out = append(out, fmt.Sprintf("%s/%s runs %s, which is not on the scripts' PATH (%s); install it, or put its directory on the PATH skillhost runs with",
						s.Name, t.Name, prog, getEnv(p.request.Env, "PATH")))
				}
			}
		}
	}
	return out
}

// Programs a script runs by name, as a Python script names them:
// shutil.which("soffice"); a list whose first item is a name and second a
// flag (cmd = ["soffice", "--headless", ...]); a list or a command string
// handed straight to subprocess or os.system.
var (
	pyWhich   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bwhich\(\s*["']([^"'\s/]+)["']`) })
	pyArgList = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[\s*["']([^"'\s/]+)["']\s*,\s*f?["']-`) })
	pyCall    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|Popen|check_output|check_call|os\.system|os\.popen|os\.exec[lv]p|os\.spawn[lv]p)\(\s*\[?\s*["']([^"'\s/]+)[\s"']`)
	})
)

// programName is what a script may run by name: no path, no expansion.
var programName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`) })

// scriptPrograms reads the programs a script runs by name: for Python
// those pyWhich, pyArgList and pyCall find, for a shell script the first
// word of each simple command that is not a shell keyword or builtin, a
// function of the script, a path or an expansion. It is a reading, not a
// parse: a name built at run time is not found.
func scriptPrograms(script string, interp []string) []string {
	if len(interp) == 0 {
		return nil
	}
	prog := filepath.Base(interp[programIndex(interp)])
	f, err := safeio.OpenRegular(script)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil
	}
	var names []string
	add := func(name string) {
		if programName().MatchString(name) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	switch {
	case isPython(prog):
		for _, re := range []*regexp.Regexp{pyWhich(), pyArgList(), pyCall()} {
			for _, m := range re.FindAllStringSubmatch(string(data), -1) {
				add(m[1])
			}
		}
	case slices.Contains(shells, prog):
		for _, name := range shellCommands(string(data)) {
			add(name)
		}
	}
	return names
}

var shells = []string{"sh", "bash", "dash", "zsh", "ksh"}

// shellWords are the shell's keywords and builtins: never a program on
// PATH.
var shellWords = strings.Fields(`if then else elif fi for while until do done case esac in function select time
	return exit break continue set unset export readonly local declare typeset shift source . eval exec trap wait
	read echo printf test [ [[ cd pwd true false : let alias unalias getopts command type hash umask ulimit builtin
	enable jobs fg bg kill mapfile readarray pushd popd dirs shopt caller compgen complete disown logout suspend
	times help history coproc`)

// shellSeparators start a new command within a line.
var shellSeparators = strings.NewReplacer("&&", "\n", "||", "\n", ";", "\n", "|", "\n", "$(", "\n", "`", "\n", "{", "\n", "}", "\n", "(", "\n", ")", "\n", "!", "\n")

// shellCommands lists the first words of a shell script's commands: each
// line (here-documents skipped, comments cut) split at ; && || | $( and
// the like, past variable assignments and keywords that lead a command
// (if, then, do, ...); the script's own functions are left out.
func shellCommands(text string) []string {
	var cmds, funcs []string
	heredoc, inCase := "", 0
	for _, line := range strings.Split(text, "\n") {
		if heredoc != "" {
			if strings.TrimSpace(line) == heredoc {
				heredoc = ""
			}
			continue
		}
		if i := strings.Index(line, "<<"); i >= 0 {
			word := strings.TrimLeft(line[i+2:], "-~ ")
			word = strings.Trim(strings.Fields(word + " x")[0], `'"\`)
			if programName().MatchString(word) {
				heredoc = word
			}
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if m := shellFunc().FindStringSubmatch(line); m != nil {
			funcs = append(funcs, m[1]+m[2])
			continue
		}
		line = shellQuoted().ReplaceAllString(line, "''")
		line = shellArith().ReplaceAllString(line, "")
		if inCase > 0 {
			line = casePattern().ReplaceAllString(line, "")
		}
		if w := strings.Fields(line); len(w) > 0 && w[0] == "case" {
			inCase++
		}
		if w := strings.Fields(line); len(w) > 0 && (w[0] == "esac" || strings.HasPrefix(w[0], "esac;")) && inCase > 0 {
			inCase--
		}
		for _, part := range strings.Split(shellSeparators.Replace(line), "\n") {
			words := strings.Fields(part)
			for len(words) > 0 && (strings.Contains(words[0], "=") || slices.Contains(shellWords, words[0]) && words[0] != "command" && words[0] != "exec" && words[0] != "time") {
				if slices.Contains([]string{"for", "case", "select", "[", "[[", "test", "echo", "printf", "export", "local", "declare", "readonly", "typeset", "set", "unset", "read", "return", "exit", "cd", "source", ".", "eval", "trap", "alias", "let", "shift", "getopts", "type", "hash", "kill", "wait"}, words[0]) {
					words = nil // the rest are arguments, not a command
					break
				}
				words = words[1:]
			}
			if len(words) > 0 && (words[0] == "command" || words[0] == "exec" || words[0] == "time") {
				words = words[1:]
				for len(words) > 0 && strings.HasPrefix(words[0], "-") {
					words = words[1:]
				}
			}
			if len(words) > 0 && programName().MatchString(words[0]) {
				cmds = append(cmds, words[0])
			}
		}
	}
	return slices.DeleteFunc(cmds, func(c string) bool { return slices.Contains(funcs, c) })
}

// shellQuoted is a quoted string (its separators are not the shell's),
// shellArith an arithmetic expression, casePattern the pattern that leads
// a branch of a case.
var (
	shellQuoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'`) })
	shellArith  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$?\(\([^)]*\)\)`) })
	casePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\(?[^()\s]*(?:\s*\|\s*[^()\s]*)*\)`) })
)

// shellFunc is a line that defines a function: "name() {" or "function name".
var shellFunc = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:function\s+([A-Za-z_][A-Za-z0-9_-]*)|([A-Za-z_][A-Za-z0-9_-]*)\s*\(\s*\))`)
})
