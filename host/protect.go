package host

import (
	"fmt"

	"github.com/skillhost/skillhost/shared"
)

// setAside moves each of paths that now exists (a protected path the run
// created: a .git/hooks, a .bashrc, where code would run later outside any
// sandbox) to a name nothing runs, "<name>.skillhost-blocked-<run>", and
// reports it as a violation. The run is over and its processes gone; the
// move is made beneath a descriptor of the parent opened without following
// symlinks, so a link planted on the way cannot redirect it.
func setAside(paths []string, run string) []shared.Violation {
	var out []shared.Violation
	for _, p := range paths {
		moved, err := moveAside(p, run)
		switch {
		case err != nil:
			out = append(out, shared.Violation{Kind: "fs-write", Target: p, Detail: fmt.Sprintf(
				"the run created this protected path (code there runs outside the sandbox later) and it could not be moved aside: %v; remove it before using the directory", err)})
		case moved != "":
			out = append(out, shared.Violation{Kind: "fs-write", Target: p, Detail: fmt.Sprintf(
				"the run created this protected path (code there runs outside the sandbox later); moved aside to %s (list it in sandbox.unprotected to allow it)", moved)})
		}
	}
	return out
}
