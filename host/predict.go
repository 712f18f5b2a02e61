package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/safeio"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/shared"
)

// Prediction says whether one tool would start under the configured
// sandbox, without running it.
type Prediction struct {
	Skill    string `json:"skill"`
	Tool     string `json:"tool"`
	Strategy string `json:"strategy,omitempty"`
	// Interpreter is the program that would run the script.
	Interpreter string `json:"interpreter,omitempty"`
	OK          bool   `json:"ok"`
	// Problem and Fix explain a failure: what would go wrong, and the
	// configuration line that prevents it.
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// PredictRuns checks every tool of every loaded skill the way a run would
// prepare it: the interpreter is found, and (where the strategy's plugin
// explains its policy) the sandbox lets the script read and execute the
// interpreter and whatever its shebang names. It does not run scripts; a
// script may still fail for its own reasons.
func (h *Host) PredictRuns(ctx context.Context) []Prediction {
	var out []Prediction
	trees := h.writableTrees() // once: each skill's grant goes into it
	for _, s := range h.Catalog.All() {
		for _, t := range s.Tools {
			out = append(out, h.predict(ctx, RunRequest{Skill: s.Name, Tool: t.Name}, trees))
		}
	}
	return out
}

func (h *Host) predict(ctx context.Context, req RunRequest, trees []writable) Prediction {
	pr := Prediction{Skill: req.Skill, Tool: req.Tool, OK: true}
	p, err := h.prepare(req)
	if err != nil {
		pr.OK, pr.Problem = false, err.Error()
		var ie *InterpreterError
		if errors.As(err, &ie) {
			pr.Fix = "install the interpreter, or put its directory on PATH (the scripts' PATH is the host's)"
		}
		return pr
	}
	pr.Strategy = p.strategy
	argv := p.request.Argv
	prog := argv[programIndex(argv)]
	if !filepath.IsAbs(prog) {
		if found, err := lookPath(prog, p.request.Env); err == nil {
			prog = found
		}
	}
	pr.Interpreter = prog
	for _, path := range append([]string{prog}, p.request.ExecPaths...) {
		if tree, why := writableIn(trees, path); tree != "" {
			pr.OK = false
			pr.Problem = fmt.Sprintf("the interpreter %s lies in %s, which runs can write (%s): one run could replace it, or plant start-up code (.pth, sitecustomize) that the next run of any skill executes", prog, tree, why)
			pr.Fix = "use an interpreter outside every writable tree: install it elsewhere and put that first on the PATH skillhost runs with, or name one with sandbox.interpreters"
			return pr
		}
	}
	ex, ok := p.exec.(shared.Explainer)
	if !ok {
		h.checkImports(ctx, p, prog, &pr)
		return pr
	}
	e, err := ex.Explain(ctx, p.request)
	if err != nil || len(e.Readable) == 0 {
		return pr // the backend does not say what a command may read
	}
	readable := func(path string) bool {
		return shared.UnderAny(path, e.Readable)
	}
	for depth, path := 0, prog; depth < 3 && path != ""; depth++ {
		real := path
		if r, err := filepath.EvalSymlinks(path); err == nil {
			real = r
		}
		if !readable(real) {
			tree := SuggestTree(real, h.env.Home)
			pr.OK = false
			pr.Problem = fmt.Sprintf("the sandbox cannot read or execute %s", real)
			if real != path {
				pr.Problem = fmt.Sprintf("the sandbox cannot read or execute %s (%s)", path, real)
			}
			pr.Fix = fmt.Sprintf("add %q to sandbox.interpreters", tree)
			if !h.autoInterpreters() {
				pr.Fix += fmt.Sprintf(", or set sandbox.interpreters: %s", config.InterpretersAuto)
			}
			return pr
		}
		path = shebangProgram(real, p.request.Env)
	}
	h.checkImports(ctx, p, prog, &pr)
	return pr
}

// shebangProgram returns the program a script's #! line runs (through
// env, looked up on the PATH of env), or "" for a binary. The line is
// split by skill.Shebang; unlike a skill's script, which the host runs
// through its interpreter, this file is exec'd by the kernel, which honours
// #! only at its first byte.
func shebangProgram(path string, env []string) string {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	head := buf[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	interp, _ := skill.Shebang(head)
	if len(interp) == 0 {
		return ""
	}
	if filepath.Base(interp[0]) == "env" && len(interp) > 1 && !strings.HasPrefix(interp[1], "-") {
		// "env NAME": NAME is the argument's first word (macOS splits the
		// rest into more arguments; Linux hands env all of it as one).
		name := strings.Fields(interp[1])[0]
		if p, err := lookPath(name, env); err == nil {
			return p
		}
		return ""
	}
	return interp[0]
}

// MissingRoots lists the configured skill roots that do not exist (the
// default roots may be missing without a problem).
func (h *Host) MissingRoots() []string {
	if h.defaultRoots {
		return nil
	}
	var out []string
	for _, r := range h.Catalog.Roots() {
		if _, err := os.Stat(r); err != nil {
			out = append(out, r)
		}
	}
	return out
}

// writable is a tree a configured grant lets runs write, and the grant.
type writable struct{ root, why string }

// writableTrees lists the trees configured grants let runs write: the
// write ceiling (which every skill's fs_write is clamped into), the
// operators' grants, and the working directory (any run may be given it
// with --workspace read-write).
func (h *Host) writableTrees() []writable {
	var out []writable
	for _, r := range grant.WritableRoots(h.Config.Sandbox.FSWrite, h.env) {
		out = append(out, writable{r, "sandbox.fs_write"})
	}
	for name, g := range h.Config.Skills.Grants {
		for _, r := range grant.WritableRoots(g.FSWrite, h.env) {
			out = append(out, writable{r, "skills.grants." + name + ".fs_write"})
		}
	}
	// A skill's own fs_write is clamped into the ceiling: covered above.
	// The workspace is refused at / and at the home directory or above.
	home, _ := grant.Resolve(h.env.Home, h.env)
	if rc, err := filepath.EvalSymlinks(h.env.Cwd); err == nil && h.env.Cwd != "" && rc != "/" && (home == "" || !shared.Under(home, rc)) {
		out = append(out, writable{rc, "the working directory, with --workspace read-write"})
	}
	return out
}

// writableIn returns the first of trees that holds path (as written or
// resolved), and its grant, or "".
func writableIn(trees []writable, path string) (string, string) {
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	for _, t := range trees {
		if shared.Under(real, t.root) || shared.Under(path, t.root) {
			return t.root, t.why
		}
	}
	return "", ""
}
