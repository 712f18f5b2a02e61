package host

import (
	"errors"
	"fmt"
	"testing"

	"github.com/skillhost/skillhost/host/internal/sandbox"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// Every way a plugin may not run here (missing, unsupported, not the
// pinned binary, another contract version, said in Info or in the
// handshake) exits with the same status, ExitUsage, and is of KindPlugin.
func TestPluginRefusalsShareAnExitStatus(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("run pdf/extract with landlock: %w", err) }
	handshake := fmt.Errorf("sandbox plugin %q at %s speaks contract version 2, but this skillhost speaks contract version 1 (%w)", "old", "/p/skillhost-sandbox-old",
		&pluginclient.VersionError{Plugin: 2, Err: errors.New("Incompatible API version with plugin. Plugin version: 2, Client versions: [1]")})
	for name, err := range map[string]error{
		"not found":                  &sandbox.NotFoundError{Name: "nope"},
		"unsupported":                &sandbox.UnsupportedError{Name: "landlock"},
		"pin mismatch":               &sandbox.ChecksumError{Name: "null"},
		"contract version in Info":   &sandbox.IncompatibleError{Name: "old", Path: "/p/skillhost-sandbox-old", Info: shared.Info{ContractVersions: []int{99}}},
		"contract version handshake": handshake,
	} {
		t.Run(name, func(t *testing.T) {
			for _, err := range []error{err, wrap(err)} {
				status := ExitStatus(err)
				if status != ExitUsage {
					t.Errorf("ExitStatus(%v) = %d, want %d", err, status, ExitUsage)
				}
				if kind, hint := ErrorKind(err, status); kind != KindPlugin || hint == "" {
					t.Errorf("ErrorKind(%v) = %q, %q; want %q with a hint", err, kind, hint, KindPlugin)
				}
			}
		})
	}
}
