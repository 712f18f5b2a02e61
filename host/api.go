package host

import (
	"context"
	"io"
	"time"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/host/sandbox"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/host/term"
)

// The types a Host's methods return, under the names an embedding program
// (and cmd/skillhost) uses without importing host's subpackages. They are
// aliases: each has one definition, in the package named.
type (
	// Skill is a parsed skill (package skill).
	Skill = skill.Skill
	// BrokenSkill is a skill bundle that failed to load (package catalog).
	BrokenSkill = catalog.Broken
	// Tool is one of a skill's script tools (package skill).
	Tool = skill.Tool
	// Grant is what a run may do (package grant).
	Grant = grant.Grant
	// Match is a skill that fits a message, with its score (package match).
	Match = match.Match
	// Scored is a skill name and its score (package match).
	Scored = match.Scored
	// Metrics measure matching at one threshold (package match).
	Metrics = match.Metrics
	// Label is a message and the skill that should match it (package match).
	Label = match.Label
	// Evaluation is the outcome of matching labelled messages (package match).
	Evaluation = match.Evaluation
	// Engine ranks skills for a message (package match); see Host.Matcher.
	Engine = match.Engine
	// Event is one published event (package events).
	Event = events.Event
	// PublishFunc receives a run's events (package events); see Host.Run.
	PublishFunc = events.PublishFunc
	// EventContext publishes the events of one run, for an embedder's own
	// runs whose children tool runs become (package events; see
	// RunRequest.Parent).
	EventContext = events.Context
	// EventOptions configure NewEventContext (package events).
	EventOptions = events.Options
)

// Formats of Host.PromptCatalog.
const (
	PromptXML  = match.FormatXML
	PromptJSON = match.FormatJSON
)

// StrategySeatbelt names the macOS Seatbelt plugin, whose profile Explain
// can render on any platform.
const StrategySeatbelt = sandbox.Seatbelt

// Init must be called first thing in main (or TestMain) by a program that
// runs scripts in-process (sandbox.enabled: false, --strategy none). When
// the program was started as the supervisor of such a script, Init does
// that job and exits the process; otherwise it returns at once and later
// runs are supervised where the platform supports it.
func Init() { sandbox.Init() }

// Printable returns s with what a terminal would act on (escape sequences,
// other control characters, invalid UTF-8) shown escaped; skill names,
// descriptions and instructions come from untrusted files.
func Printable(s string) string { return skill.Printable(s) }

// Seconds renders a duration as seconds without a unit or trailing zeros,
// as grants show timeouts: 1.5, 60.
func Seconds(d time.Duration) string { return grant.Seconds(d) }

// ParseWorkspace reads a workspace grant, none (or empty), read or
// read-write, accepting common spellings (off, ro, rw, write), and returns
// its canonical form; anything else is an error.
func ParseWorkspace(s string) (string, error) { return grant.ParseWorkspace(s) }

// NewEventContext returns an events context for one of the embedder's own
// runs (an agent turn, say); tool runs given it as RunRequest.Parent
// publish their events as its children.
func NewEventContext(o EventOptions) *EventContext { return events.New(o) }

// JSONLines returns a PublishFunc that writes each event as one line of
// JSON to w, safe for concurrent use.
func JSONLines(w io.Writer) PublishFunc { return events.JSONLines(w) }

// OutputDelta is the event carrying a piece of a running tool's output,
// as data["delta"].
const OutputDelta = events.ToolCallOutputDelta

// IsTerminal reports whether w is a terminal, where text from skills
// passes Printable (see package term).
func IsTerminal(w io.Writer) bool { return term.IsTerminal(w) }

// TerminalWriter passes what is written through Printable, keeping UTF-8
// sequences split across writes whole (see package term).
type TerminalWriter = term.Writer

// NewTerminalWriter returns a TerminalWriter over w.
func NewTerminalWriter(w io.Writer) *TerminalWriter { return term.NewWriter(w) }

// ReadLabels reads labelled messages, one JSON object a line ({"message":
// ..., "expect": "skill-name"}, no expect for a message nothing should
// match); blank lines and lines starting with # are skipped. Errors name
// source and the line.
func ReadLabels(r io.Reader, source string) ([]Label, error) { return match.ReadLabels(r, source) }

// Evaluate matches every labelled message with e (see Host.Matcher) and
// returns the ranks and scores from which Evaluation computes metrics;
// source names the labels in errors.
func Evaluate(ctx context.Context, e *Engine, labels []Label, source string) (*Evaluation, error) {
	return match.Evaluate(ctx, e, labels, source)
}
