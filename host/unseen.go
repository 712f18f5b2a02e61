package host

import (
	"fmt"
	"os"
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
// already, when the backend enforces the grant's reads on this machine.
// Relative arguments are taken in the run's working directory, as the
// script takes them; --flag=value names value.
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
	var out []shared.Violation
	seen := map[string]bool{}
	for _, arg := range argv[programIndex(argv)+1:] {
		raw, ok := argPath(arg, p.request.Dir)
		// What the grant or the system shows, as named, is checked before
		// anything on disk: a symlink the run left in its grant is not
		// followed.
		if !ok || strings.ContainsRune(raw, 0) || shownBySystem(raw) || shared.UnderAny(raw, visible) {
			continue
		}
		path := h.resolved(raw)
		// Where a secret is, or whether it exists, is not the run's to learn.
		if seen[path] || shownBySystem(path) || shared.UnderAny(path, visible) || isCredential(path) || grant.LooksSecret(path) {
			continue
		}
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		seen[path] = true
		out = append(out, shared.Violation{Kind: Unseen, Target: path,
			Detail: fmt.Sprintf("the argument %q names %s, which the sandbox kept from the script: %s", arg, path, h.remedy(p.skill.Name, false, path))})
	}
	return out
}

// shownBySystem reports whether path lies in a tree a confining backend
// shows every script, read only, whatever the grant: the system trees and
// the interpreters' (systemDirs), and on macOS Seatbelt's, with the
// /private spelling of /etc and /var, and the package stores. A path there
// may well have been there for the script, so it is never called unseen.
func shownBySystem(path string) bool {
	return systemTree(path) != "" || underSystem(path) ||
		shared.UnderAny(path, []string{"/System", "/Library", "/private/etc", "/private/var/db", "/opt/homebrew", "/nix/store"})
}
