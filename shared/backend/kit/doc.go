// Package kit is the part of the backend SDK that does not link go-plugin:
// what a backend's calls use ([SpecFor], [Run], [Output], [NewRunner],
// [DecodeConfig], [LoggerFrom]) and [ServeFastPath], the server of the
// one-shot fast path alone. Package backend has all of it too, and its
// Serve adds go-plugin's server.
//
// go-plugin's net/rpc and gRPC reflection service cost every process that
// links them their package initialisers, a tenth of a one-shot `skillhost
// run` (docs/performance.md). A backend whose package imports kit instead
// of backend can ship a second binary, skillhost-oneshot-NAME beside
// skillhost-sandbox-NAME, whose main is
//
//	func main() {
//		impl := mybackend.New() // first: the runner's helpers dispatch here
//		kit.UseOneProcessor()   // if its calls wait on processes and pipes
//		kit.ServeFastPath(impl)
//	}
//
// and a host that makes one call starts that instead (the pinning rules are
// in docs/plugins.md).
package kit
