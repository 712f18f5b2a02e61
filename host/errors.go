package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/internal/sandbox"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// Exit statuses of the skillhost command; ExitStatus chooses between the
// last two for an error.
const (
	ExitOK     = 0
	ExitFailed = 1 // the thing asked about failed
	ExitUsage  = 2 // a usage or configuration problem the caller can fix
)

// RootError is a configured skill root that does not exist (see
// Host.CheckRoots).
type RootError struct{ Roots []string }

func (e *RootError) Error() string {
	return fmt.Sprintf("skill root %s does not exist", strings.Join(e.Roots, ", "))
}

// CheckRoots returns a *RootError naming the configured skill roots that do
// not exist, or nil. Roots skillhost chose by default may be missing.
func (h *Host) CheckRoots() error {
	if missing := h.MissingRoots(); len(missing) > 0 {
		return &RootError{Roots: missing}
	}
	return nil
}

// UnknownToolError is a tool call naming a tool its skill does not have.
type UnknownToolError struct {
	Skill, Tool string
	msg         string // with the suggestions
}

func (e *UnknownToolError) Error() string { return e.msg }

// ExitStatus chooses the exit status for an error returned by Open, Run,
// Explain or Resolve: ExitOK for nil; ExitUsage for a problem the caller
// fixes by changing the request or the configuration (a *UsageError, a
// configuration *config.Error, an unknown skill, an interpreter outside
// the sandbox (a plugin's refusal with shared.ReasonInterpreter), an
// unknown tool, a *RootError, and every "this plugin may not run here": a
// strategy whose plugin is missing, cannot work on this platform, is not
// the pinned binary, or does not speak this host's contract version (a
// *sandbox.IncompatibleError, a *pluginclient.VersionError)); ExitFailed
// for anything else (a plugin crashed, a script could not start). Errors
// are recognised through wrapping.
func ExitStatus(err error) int {
	if err == nil {
		return ExitOK
	}
	var (
		ue *UsageError
		ce *config.Error
		re *RootError
		ie *InterpreterError
		nf *sandbox.NotFoundError
		us *sandbox.UnsupportedError
		cs *sandbox.ChecksumError
		pc *sandbox.ConfigError
		ic *sandbox.IncompatibleError
		ve *pluginclient.VersionError
	)
	var ut *UnknownToolError
	if errors.As(err, &ue) || errors.As(err, &ce) || errors.As(err, &re) || catalog.IsNotFound(err) ||
		errors.As(err, &ie) || errors.As(err, &nf) || errors.As(err, &us) || errors.As(err, &cs) ||
		errors.As(err, &ut) || errors.As(err, &pc) || shared.RefusedFor(err) == shared.ReasonInterpreter ||
		errors.Is(err, ErrNoStage) || errors.As(err, &ic) || errors.As(err, &ve) {
		return ExitUsage
	}
	return ExitFailed
}

// Error kinds ErrorKind names.
const (
	KindConfig       = "config"
	KindSkillRoot    = "skill_root"
	KindUnknownSkill = "unknown_skill"
	KindBrokenSkill  = "broken_skill"
	KindUnknownTool  = "unknown_tool"
	KindInterpreter  = "interpreter"
	KindPlugin       = "plugin"
	KindUsage        = "usage"
	KindFailed       = "failed"
)

// ErrorKind names the kind of err for machine-readable output (`--json`
// errors) and says what to do next, in terms of skillhost's commands.
// status is the exit status chosen for err: an error of no known kind is
// KindUsage when status is ExitUsage (a bad flag, say) and KindFailed,
// with no hint, otherwise.
func ErrorKind(err error, status int) (kind, hint string) {
	var (
		ce *config.Error
		ie *InterpreterError
		re *RootError
		nf *sandbox.NotFoundError
		us *sandbox.UnsupportedError
		cs *sandbox.ChecksumError
	)
	switch {
	case err == nil:
		return "", ""
	case errors.As(err, &ce):
		return KindConfig, "fix the key named in the message; docs/configuration.md lists them"
	case errors.As(err, new(*sandbox.ConfigError)):
		return KindConfig, "fix the plugin's settings under plugins.config.NAME; the plugin's documentation lists them"
	case errors.As(err, &re):
		return KindSkillRoot, "fix skills.roots or --skills; skillhost doctor checks them"
	case errors.As(err, new(*catalog.NotFoundError)) && brokenSkill(err):
		return KindBrokenSkill, "fix the file and line named; skillhost validate DIR lists every problem of a skill"
	case catalog.IsNotFound(err):
		return KindUnknownSkill, "skillhost list shows the skills"
	case errors.As(err, &ie), shared.RefusedFor(err) == shared.ReasonInterpreter:
		return KindInterpreter, "skillhost doctor checks every tool and prints the line to add"
	case errors.Is(err, ErrNoStage):
		return KindPlugin, "set sandbox.writes: direct for a strategy that cannot stage writes, or pick one that can (skillhost plugins shows staged_writes)"
	case errors.As(err, &nf), errors.As(err, &us), errors.As(err, &cs),
		errors.As(err, new(*sandbox.IncompatibleError)), errors.As(err, new(*pluginclient.VersionError)):
		return KindPlugin, "skillhost plugins lists the plugins found; skillhost doctor explains what is wrong"
	case errors.As(err, new(*UnknownToolError)):
		return KindUnknownTool, "skillhost show NAME lists the skill's tools"
	case status == ExitUsage:
		return KindUsage, "skillhost help COMMAND shows the usage"
	}
	return KindFailed, ""
}

// brokenSkill reports whether err names a skill that failed to load.
func brokenSkill(err error) bool {
	var nf *catalog.NotFoundError
	return errors.As(err, &nf) && nf.Broken != nil
}
