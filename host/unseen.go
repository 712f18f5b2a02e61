package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillhost/skillhost/host/grant"
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
func (h *Host) unseenArguments(p *prepared, r shared.Result) []shared.Violation {
	if !p.confines || (r.ExitCode == 0 && r.Signal == "") {
		return nil
	}
	// Only a backend that keeps reads to the grant, here: a remote one's
	// script does not see this machine's files at all.
	if !p.readsConfined {
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
		raw := filepath.Clean(path)
		path = h.resolved(raw)
		if _, err := os.Lstat(path); err != nil || seen[path] || shownBySystem(raw) || shownBySystem(path) || shared.UnderAny(path, visible) {
			continue
		}
		// Where a secret is, or whether it exists, is not the run's to learn.
		if isCredential(path) || grant.LooksSecret(path) {
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

// systemReads are the trees a confining backend shows every script, read
// only, whatever the grant: Landlock's system directories and Seatbelt's
// (with macOS's /private spelling of /etc and /var). A path under one may
// well have been there for the script, so it is never called unseen.
var systemReads = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/dev", "/proc", "/sys",
	"/System", "/Library", "/private/etc", "/private/var/db", "/opt/homebrew", "/nix/store"}

func shownBySystem(path string) bool { return shared.UnderAny(path, systemReads) }
