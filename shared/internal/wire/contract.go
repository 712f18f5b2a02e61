// Package wire is the gRPC side of the plugin contract, shared by the
// plugin SDK (package backend) and the host's client (package
// pluginclient): the go-plugin handshake and plugin set, the adapters
// between the contract's Go types and the generated protocol, and the
// throwaway mutual-TLS identities. It is internal so the generated code
// never becomes part of the SDK's API.
package wire

import "github.com/skillhost/skillhost/shared"

// The contract's types, under their own names so the adapters read as the
// protocol does.
type (
	Executor      = shared.Executor
	Explainer     = shared.Explainer
	Explanation   = shared.Explanation
	Configurable  = shared.Configurable
	Request       = shared.Request
	Result        = shared.Result
	Grant         = shared.Grant
	Limits        = shared.Limits
	Violation     = shared.Violation
	Info          = shared.Info
	Enforcement   = shared.Enforcement
	Probe         = shared.Probe
	ProbeStatus   = shared.ProbeStatus
	ConfigProblem = shared.ConfigProblem
)
