// Package backend is the plugin side of the skillhost SDK: what a
// confinement backend's binary needs besides the contract types of package
// shared. A backend's main is one line:
//
//	func main() { backend.Serve(mybackend.New()) }
//
// [Serve] speaks hashicorp/go-plugin over gRPC with skillhost's handshake,
// negotiates the contract version, watches the host's lifeline so the
// plugin never outlives it, and dispatches the helper processes of package
// runner. [Run] runs a command with the contract's bounds (timeout with
// TERM then KILL of the whole tree, output cap, exactly the given
// environment); [SpecFor] turns a request into its runner spec, which a
// backend adjusts (wraps the argv, names a confiner) before calling Run.
// Log only through [Logger]: stdout belongs to the handshake.
package backend
