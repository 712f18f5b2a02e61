package host

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillhost/skillhost/host/internal/safeio"
)

// importCheck is the Python that reports which of the modules named in
// argv (after the script's directory, which a script run finds modules in
// first) cannot be found, one per line.
const importCheck = `import importlib.util, sys
sys.path.insert(0, sys.argv[1])
for m in sys.argv[2:]:
    try:
        found = importlib.util.find_spec(m) is not None
    except Exception:
        found = False
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
	pr.OK = false
	pr.Problem = fmt.Sprintf("%s cannot import %s", prog, strings.Join(missing, ", "))
	pr.Fix = fmt.Sprintf("install them for %s", prog)
	for _, other := range otherPythons(p.request.Env, prog) {
		trees := resolveInstallation(other, p.request.Env, p.request.Dir, h.env.Home).Trees
		if still, err := h.missingModules(ctx, p, other, trees, missing); err == nil && len(still) == 0 {
			pr.Fix = fmt.Sprintf("%s has them: set skills.grants.%s.interpreter: %s in the configuration, or put %s first on the PATH skillhost runs with", other, p.skill.Name, other, filepath.Dir(other))
			break
		}
	}
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

// topImports reads the top-level modules a Python script imports at its
// top level (no indentation): "import a.b, c as d" gives a and c, "from
// e.f import g" gives e; relative imports are the skill's own.
func topImports(script string) []string {
	f, err := safeio.OpenRegular(script)
	if err != nil {
		return nil
	}
	defer f.Close()
	var mods []string
	add := func(name string) {
		name, _, _ = strings.Cut(strings.TrimSpace(name), ".")
		if name != "" && name != "__future__" && isIdentifier(name) && !slices.Contains(mods, name) {
			mods = append(mods, name)
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
