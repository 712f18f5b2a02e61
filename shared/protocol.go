package shared

import "errors"

// The parts of the wire protocol that are not in the .proto file; each is
// specified in docs/contract.md, so a plugin in any language can keep it.

// Environment a host sets for the plugins it launches.
const (
	// EnvLifelineFD names the inherited file descriptor the plugin reads;
	// EOF means the host is gone, however it died.
	EnvLifelineFD = "SKILLHOST_LIFELINE_FD"
	// EnvTLSFD names the inherited file descriptor from which a plugin
	// reads its TLS identity (its certificate and key, and the host's
	// certificate); absent when the host does not authenticate.
	EnvTLSFD = "SKILLHOST_TLS_FD"
	// EnvLogLevel is the hclog level of the plugin's logger.
	EnvLogLevel = "SKILLHOST_PLUGIN_LOG_LEVEL"
	// EnvOneShot, set to 1, says the host will make one call and exit, so
	// the plugin starts nothing ahead of time for a next call.
	EnvOneShot = "SKILLHOST_ONE_SHOT"
	// EnvSupervisorFD names an inherited descriptor, open for reading, of
	// the plugin's lean supervisor binary (skillhost-supervisor-NAME beside
	// skillhost-sandbox-NAME): the Go SDK's runner starts it as each run's
	// supervisor instead of re-executing the plugin binary, which holds
	// everything else a plugin links (gRPC, protobuf, its proxy) and costs
	// several times as much to start. Absent: the plugin re-executes
	// itself. The binary must register the same confiners under the same
	// names as the plugin (runner.SupervisorMain).
	EnvSupervisorFD = "SKILLHOST_SUPERVISOR_FD"
)

// Debug mode (the Go SDK's; see backend.Serve): a plugin started by hand
// with EnvPluginDebug=1 serves without a host and prints the value of
// EnvPluginReattach, a JSON object from plugin name to go-plugin's reattach
// configuration, with which a host attaches to it instead of starting it.
const (
	EnvPluginDebug    = "SKILLHOST_PLUGIN_DEBUG"
	EnvPluginReattach = "SKILLHOST_PLUGIN_REATTACH"
)

// Handshake values of go-plugin: a plugin checks that the environment
// variable HandshakeCookieKey holds HandshakeCookieValue, and answers with
// ContractVersion as its protocol version. The cookie only keeps a plugin
// binary started by hand from waiting for a host that is not there; it is
// not a security measure (mutual TLS and checksum pinning are).
const (
	HandshakeCookieKey   = "SKILLHOST_SANDBOX_PLUGIN"
	HandshakeCookieValue = "6b1c5f2e9d8a4f03b7e2c1d0a9f8e7d6c5b4a3928170f6e5d4c3b2a190817263"
	// PluginName is the single plugin a sandbox binary serves.
	PluginName = "executor"
)

// MaxChunk is the largest output chunk sent in one message, far below
// gRPC's 4 MiB message limit.
const MaxChunk = 64 << 10

// ErrNotExplainable is returned by Explain for a backend that does not
// implement Explainer.
var ErrNotExplainable = errors.New("this backend cannot explain its confinement")
