// Package oneshot is the plugin side of the one-shot fast path: a host that
// makes a single call (skillhost run from a shell) starts the plugin with
// two pipes instead of go-plugin's socket, mutual TLS and gRPC, and sends
// the contract's own messages over them (see docs/performance.md). The
// calls reach the same Executor through the same serving code as over gRPC;
// only the transport is lighter.
//
// A plugin main calls Serve first, then backend.Serve:
//
//	func main() {
//		oneshot.Serve(landlock.New())
//		backend.Serve(landlock.New())
//	}
//
// A host that does not ask for the fast path never sees a difference, and
// a plugin that lacks Serve is started the ordinary way after its first,
// failed, start.
package oneshot

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/wire"
	"github.com/skillhost/skillhost/shared/runner"
)

// drainTimeout bounds how long the plugin waits, once the host has closed
// its pipe, for running calls to tear their commands down before it exits:
// the same bound as go-plugin's path gives a plugin whose lifeline broke.
const drainTimeout = 3 * time.Second

// Serve returns at once unless the host started this process for the fast
// path; then it serves impl over the inherited pipes until the host closes
// its end and exits the process. It first dispatches the helper processes
// of package runner (runner.Init), as backend.Serve does.
func Serve(impl shared.Executor) {
	runner.Init()
	v, ok := os.LookupEnv(wire.EnvPipe)
	if !ok {
		return
	}
	// Nothing this process starts may see it, or the pipes.
	os.Unsetenv(wire.EnvPipe)
	in, out, err := wire.ParsePipeEnv(v)
	if err != nil {
		// The host starts this plugin over go-plugin instead.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	syscall.CloseOnExec(in)
	syscall.CloseOnExec(out)
	runner.KeepSpares(false)
	base, cancel := context.WithCancel(context.Background())
	err = wire.ServePipe(base, impl, os.NewFile(uintptr(in), "host-calls"), os.NewFile(uintptr(out), "host-answers"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "skillhost plugin pipe:", err)
	}
	// The host closed its end (it is done, or gone): cancel what still
	// runs and give it time to stop its commands.
	cancel()
	done := make(chan struct{})
	go func() { wire.Inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainTimeout):
	}
	if c, ok := impl.(io.Closer); ok {
		_ = c.Close()
	}
	os.Exit(0)
}
