//go:build unix

package conformance

import (
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// Backend is a running backend as the escape suite needs it: its Executor,
// its process id (attacks aim at it) and its socket directory (attacks try
// to reach it). *pluginclient.Conn is one.
type Backend interface {
	shared.Executor
	Pid() int
	SocketDir() string
}

// EscapeConfig tells the escape suite how to start the backend under test
// and an unconfined control backend (the null plugin), each as the given
// user (nil: the test's own). Both are started once per user and must be
// stopped by the test's cleanup.
type EscapeConfig struct {
	Launch  func(t *testing.T, cred *syscall.Credential) Backend
	Control func(t *testing.T, cred *syscall.Credential) Backend
	// Only, if set, picks the attacks to run by name (all by default).
	Only func(name string) bool
	// Strict counts every attack against the backend, including those
	// whose effect its declared isolation keeps inside the run (signals and
	// ptrace to $PPID, netlink, its own mount table). A backend whose
	// in-sandbox parent is less confined than the command (Landlock's
	// supervisor is outside the command's Landlock domain) sets it: for
	// such a backend those attacks reach past a confinement layer even
	// though nothing leaves the namespaces.
	Strict bool
}

// EnvHostSecret names a variable that a test binary puts in its own
// environment from its start (re-executing itself if need be), playing the
// host's secrets: attacks then look for it in the script's environment and
// in /proc. Without it those attacks are skipped.
const EnvHostSecret = "SKILLHOST_ESCAPE_HOST_SECRET"

// claim is what a backend must claim in Info.Enforces for an attack to
// apply to it.
type claim int

const (
	claimFSRead claim = iota
	claimFSWrite
	claimNetwork
	claimProcess
	claimLimits
	claimLifetime
	claimStagedWrites
)

func (c claim) String() string {
	return [...]string{"fs.read", "fs.write", "network", "process isolation", "resource limits", "timeouts", "staged writes"}[c]
}

func (c claim) claimedBy(e shared.Enforcement) bool {
	return [...]bool{e.FSRead, e.FSWrite, e.Network, e.ProcessIsolation, e.ResourceLimits, e.Timeout, e.StagedWrites}[c]
}
