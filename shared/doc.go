// Package shared is the contract between the skillhost host and its sandbox
// plugins: the [Executor] interface a confinement backend implements, the
// types that cross the wire ([Request], [Result], [Info], [Probe]), the
// optional [Configurable] and [Explainer], the contract version and the
// protocol constants a plugin in any language must honour. It imports
// nothing of skillhost and runs nothing.
//
// A backend implements [Executor]: [Executor.Info] describes it and says
// what it enforces, [Executor.Probe] says whether it can work on this
// machine right now, and [Executor.Execute] runs one command under an
// effective grant, streaming its output.
//
// The SDK is split by audience, one import each:
//
//   - shared/backend, for plugin authors: Serve (the plugin's one-line
//     main), Run and SpecFor (the process runner with the contract's
//     bounds), Logger and DecodeConfig.
//   - shared/pluginclient, for hosts: Launch and Conn, and the crash errors.
//   - shared/conformance, for a backend's tests: the conformance suite and
//     the portable escape suite, driven by Info.Enforces.
//   - shared/runner, the process runner itself, for backends that confine
//     the command's own process (a Confiner).
//
// docs/contract.md specifies the wire protocol completely.
package shared
