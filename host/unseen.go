package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// Unseen is the kind of a Violation the host adds after a confined run
// that failed: one of the run's arguments names a file or directory of the
// host that lies outside the grant, so the sandbox kept it from the script
// (with a view, the path does not exist there at all, so no denial is
// reported). Its Target is the path and its Detail the least grant that
// shows it, as for a denial.
const Unseen = "unseen"

// unseenArguments returns an Unseen violation for each argument of a failed
// confined run that names an existing path of the host beyond the grant,
// the skill's directory and the system trees, and that no denial names
// already, when the backend enforces the grant's reads on this machine. Relative arguments are taken in the run's working directory,
// as the script takes them; --flag=value names value.
func (h *Host) unseenArguments(ctx context.Context, p *prepared, r shared.Result) []shared.Violation {
	if !p.confines || (r.ExitCode == 0 && r.Signal == "") {
		return nil
	}
	// Only a backend that keeps reads to the grant, here: a remote one's
	// script does not see this machine's files at all.
	if info, err := p.exec.Info(ctx); err != nil || !info.Enforces.FSRead || info.Remote {
		return nil
	}
	argv := p.request.Argv
	visible := append([]string{p.request.SkillDir}, p.grant.FSRead...)
	visible = append(visible, p.grant.FSWrite...)
	visible = append(visible, p.request.ExecPaths...)
	for _, v := range r.Violations {
		if v.Target != "" {
			visible = append(visible, v.Target)
		}
	}
	cwd := h.resolved(h.env.Cwd)
	var out []shared.Violation
	seen := map[string]bool{}
	for _, arg := range argv[programIndex(argv)+1:] {
		if strings.HasPrefix(arg, "-") {
			_, v, ok := strings.Cut(arg, "=")
			if !ok {
				continue
			}
			arg = v
		}
		if arg == "" || strings.ContainsRune(arg, 0) {
			continue
		}
		path := arg
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.request.Dir, path)
		}
		path = h.resolved(filepath.Clean(path))
		if _, err := os.Lstat(path); err != nil || seen[path] || systemTree(path) != "" || shared.UnderAny(path, visible) {
			continue
		}
		seen[path] = true
		detail := h.remedy(p.skill.Name, false, path)
		if path == cwd {
			detail = fmt.Sprintf("outside the grant; it is the working directory: run with --workspace read (or set skills.grants.%s.workspace: read)", p.skill.Name)
		}
		out = append(out, shared.Violation{Kind: Unseen, Target: path,
			Detail: fmt.Sprintf("the argument %q names %s, which the sandbox kept from the script: %s", arg, path, detail)})
	}
	return out
}
