//go:build unix

package conformance

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"syscall"
)

// WithHostSecret makes the test binary play a host with a secret: unless
// EnvHostSecret is already in its environment, it starts the binary over
// with a random one there, so the secret is in its environment from exec
// (where /proc/<pid>/environ shows it) and the escape suite's attacks on the
// host's environment run instead of skipping. Call it first thing in
// TestMain, before anything the test must not do twice; it returns only in
// the binary that already has the secret, and exits the process if it
// cannot start it over.
func WithHostSecret() {
	if os.Getenv(EnvHostSecret) != "" {
		return
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, append(os.Environ(), EnvHostSecret+"=host-secret-"+hex.EncodeToString(b)))
	}
	fmt.Fprintln(os.Stderr, "conformance: start the test over with a host secret:", err)
	os.Exit(1)
}
