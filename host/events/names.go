// Package events is the structured stream of what happens during a run:
// lifecycle events (run.*), deltas (output as it arrives) and the rest of
// the vocabulary the reference framework's streaming module defines, with
// the same names and event shape, so consumers written for one read the
// other.
//
// A [Context] publishes events for one run through a callback; contexts
// created from one another share a [Counter], so their events carry one
// strictly increasing sequence number. An [Event]'s Data is a typed
// payload (package host's run events: host.RunStarted, host.OutputDelta,
// ...), read with a type switch; its JSON merges the payload's keys with
// the run's envelope (run_id, message_id, scope) in one data object.
package events

import "slices"

// Event names. The set and the spelling are the reference's, all 20 of
// them, in its order.
const (
	RunStarted     = "run.started"
	RunCompleted   = "run.completed"
	RunFailed      = "run.failed"
	RunInterrupted = "run.interrupted"

	StepStarted   = "step.started"
	StepCompleted = "step.completed"
	StepFailed    = "step.failed"

	PartCreated   = "part.created"
	PartCompleted = "part.completed"
	PartFailed    = "part.failed"

	TextDelta              = "text.delta"
	ToolCallArgumentsDelta = "tool_call.arguments.delta"
	ToolCallOutputDelta    = "tool_call.output.delta"
	ReasoningDelta         = "reasoning.delta"
	DataDelta              = "data.delta"

	HITLRequested = "hitl.requested"
	HITLResolved  = "hitl.resolved"

	UsageUpdated    = "usage.updated"
	MetadataUpdated = "metadata.updated"

	StreamEnded = "stream.ended"
)

var (
	all = []string{
		RunStarted, RunCompleted, RunFailed, RunInterrupted,
		StepStarted, StepCompleted, StepFailed,
		PartCreated, PartCompleted, PartFailed,
		TextDelta, ToolCallArgumentsDelta, ToolCallOutputDelta, ReasoningDelta, DataDelta,
		HITLRequested, HITLResolved,
		UsageUpdated, MetadataUpdated,
		StreamEnded,
	}
	lifecycle = all[:4]
	delta     = all[10:15]
)

// All returns the 20 event names in the reference's order. The slice is a
// copy.
func All() []string { return append([]string(nil), all...) }

// Lifecycle returns the four run.* events.
func Lifecycle() []string { return append([]string(nil), lifecycle...) }

// Delta returns the five *.delta events.
func Delta() []string { return append([]string(nil), delta...) }

// IsLifecycle reports whether name is exactly one of the run.* events.
func IsLifecycle(name string) bool { return slices.Contains(lifecycle, name) }

// IsDelta reports whether name is exactly one of the *.delta events.
func IsDelta(name string) bool { return slices.Contains(delta, name) }

// IsValid reports whether name is exactly one of the 20 event names; the
// comparison is case-sensitive and nothing is trimmed.
func IsValid(name string) bool { return slices.Contains(all, name) }
