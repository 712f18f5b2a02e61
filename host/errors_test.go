package host

import (
	"errors"
	"fmt"
	"testing"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/internal/sandbox"
	"github.com/skillhost/skillhost/shared"
)

func TestExitStatusAndErrorKind(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("run pdf/extract with landlock: %w", err) }
	tests := []struct {
		name   string
		err    error
		status int
		kind   string
	}{
		{"nil", nil, ExitOK, ""},
		{"usage", &UsageError{errors.New("--args: unterminated quote")}, ExitUsage, KindUsage},
		{"unknown tool", &UnknownToolError{Skill: "pdf", Tool: "x", msg: `skill "pdf" has no tool "x"; it has "extract"`}, ExitUsage, KindUnknownTool},
		{"a message that only says so", errors.New(`a script printed: skill "pdf" has no tool "x"`), ExitFailed, KindFailed},
		{"config", &config.Error{Source: "c.yaml", Err: errors.New("line 3: sandbox.timeout: bad")}, ExitUsage, KindConfig},
		{"root", &RootError{Roots: []string{"/nope"}}, ExitUsage, KindSkillRoot},
		{"unknown skill", &UsageError{&catalog.NotFoundError{Name: "pfd"}}, ExitUsage, KindUnknownSkill},
		{"unknown skill, bare", &catalog.NotFoundError{Name: "pfd"}, ExitUsage, KindUnknownSkill},
		{"interpreter", &InterpreterError{errors.New("python3 is outside the sandbox")}, ExitUsage, KindInterpreter},
		{"interpreter from a plugin", wrap(shared.Refused(shared.ReasonInterpreter, errors.New("add /opt/py to sandbox.interpreters"))), ExitUsage, KindInterpreter},
		{"words alone are not a reason", wrap(errors.New("rpc error: add /opt/py to sandbox.interpreters")), ExitFailed, KindFailed},
		{"plugin not found", wrap(&sandbox.NotFoundError{Name: "nope"}), ExitUsage, KindPlugin},
		{"plugin unsupported", wrap(&sandbox.UnsupportedError{Name: "landlock"}), ExitUsage, KindPlugin},
		{"plugin checksum", wrap(&sandbox.ChecksumError{Name: "null"}), ExitUsage, KindPlugin},
		{"plugin settings refused", wrap(&sandbox.ConfigError{Name: "landlock", Problems: []shared.ConfigProblem{{Key: "x", Message: "unknown"}}}), ExitUsage, KindConfig},
		{"no stage for writes", wrap(shared.Refused(shared.ReasonUnsupported, fmt.Errorf("%w: strategy echo does not stage writes", ErrNoStage))), ExitUsage, KindPlugin},
		{"plugin crashed", wrap(errors.New("plugin exited unexpectedly")), ExitFailed, KindFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := ExitStatus(tt.err)
			if status != tt.status {
				t.Errorf("ExitStatus = %d, want %d", status, tt.status)
			}
			kind, hint := ErrorKind(tt.err, status)
			if kind != tt.kind {
				t.Errorf("ErrorKind = %q, want %q", kind, tt.kind)
			}
			if (hint == "") != (tt.kind == "" || tt.kind == KindFailed) {
				t.Errorf("hint %q for kind %q", hint, kind)
			}
		})
	}
	// An error of no known kind is a usage error when the caller chose
	// that status (a bad flag), a failure otherwise.
	flag := errors.New("unknown flag: --nope")
	if kind, _ := ErrorKind(flag, ExitUsage); kind != KindUsage {
		t.Errorf("a bad flag with status 2 is %q", kind)
	}
	if kind, _ := ErrorKind(flag, ExitFailed); kind != KindFailed {
		t.Errorf("a bad flag with status 1 is %q", kind)
	}
}
