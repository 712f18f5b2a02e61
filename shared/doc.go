// Package shared is the contract between the skillhost host and its sandbox
// plugins, and the SDK for writing one. It is the only package a
// third-party confinement backend needs to import.
//
// A backend implements [Executor]: [Executor.Info] describes it,
// [Executor.Probe] says whether it can work on this machine right now, and
// [Executor.Execute] runs one command under an effective grant, streaming
// its output. A backend's main is one line:
//
//	func main() { shared.Serve(mybackend.New()) }
//
// [Serve] speaks hashicorp/go-plugin over gRPC with skillhost's handshake,
// negotiates the contract version, watches the host's lifeline so the
// plugin never outlives it, and dispatches the process-runner helper modes
// of package runner, which every backend should use to run commands.
package shared
