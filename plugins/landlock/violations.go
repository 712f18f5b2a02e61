package landlock

import (
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/denials"
)

// Violations reads a run's output for sandbox denials under policy p; see
// package denials.
func Violations(output string, p confiner.Policy, argv []string, dir string) []shared.Violation {
	return denials.Scan(output, p, denials.Options{Network: p.Network, Limits: p.Limits, Ignore: argv, Dir: dir})
}

// explainSetup adds a remedy to a start-up failure, typically an
// interpreter outside the system directories that the sandbox cannot read
// (a pyenv shim under $HOME).
func explainSetup(err error, p confiner.Policy, req shared.Request) error {
	msg := err.Error()
	// Outside the view the program does not exist; with Landlock alone it
	// is denied.
	if !strings.Contains(msg, "permission denied") && !strings.Contains(msg, "no such file or directory") || len(req.Argv) == 0 {
		return err
	}
	prog := req.Argv[0]
	if p.Readable(prog) {
		return err
	}
	return shared.Refused(shared.ReasonInterpreter, fmt.Errorf("%w: the sandbox does not let scripts read or execute %s; add %s to sandbox.interpreters (read and execute only), "+
		"or use an interpreter under /usr", err, prog, denials.SuggestRoot(prog, denials.Home(req.Env))))
}
