// Package pluginclient is the host side of the skillhost SDK: [Launch]
// starts a sandbox plugin binary with the protocol's environment, lifeline
// and mutual TLS, completes the go-plugin handshake and returns a [Conn],
// an Executor whose calls travel over gRPC. A call that fails because the
// plugin process died returns an error matching [ErrCrashed].
package pluginclient
