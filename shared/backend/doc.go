// Package backend is the plugin side of the skillhost SDK: what a
// confinement backend's binary needs besides the contract types of package
// shared. A backend's main is one line:
//
//	func main() { backend.Serve(mybackend.New()) }
//
// [Serve] speaks hashicorp/go-plugin over gRPC with skillhost's handshake,
// negotiates the contract version, watches the host's lifeline so the
// plugin never outlives it, calls the backend's Close (io.Closer) before
// the plugin exits, and has a debug mode for running the plugin under a
// debugger with a host attached to it (see Serve). [Run] runs a command
// with the contract's bounds (timeout with TERM then KILL of the whole
// tree, output cap, exactly the given environment); [SpecFor] turns a
// request into its runner spec, which a backend adjusts (wraps the argv,
// passes descriptors, takes a status channel, sets limits) before calling
// Run; [Output] is the emit function of a call as an io.Writer. A backend
// with a confiner of its own makes its runner with [NewRunner], first
// thing: the runner's helpers are the plugin's binary re-executed. Log
// only through [LoggerFrom] with the call's context: stdout belongs to the
// handshake.
//
// What a backend's calls use is also in package kit, which links no
// go-plugin, with the fast path's server alone: a backend built on kit can
// ship a binary for one-shot hosts beside its plugin (see kit).
package backend
