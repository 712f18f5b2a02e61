//go:build unix

package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/shared/pluginclient"
)

// LaunchAs starts the plugin binary at path like Launch, as the user cred
// (nil: the test's own), and stops it when the test ends. Starting a
// plugin as another user takes root, and the binary (and every directory
// above it) must be readable by that user.
func LaunchAs(t testing.TB, path string, cred *syscall.Credential) *pluginclient.Conn {
	t.Helper()
	var attr *syscall.SysProcAttr
	if cred != nil {
		attr = &syscall.SysProcAttr{Credential: cred}
	}
	return launch(t, path, attr)
}

// Launcher returns a function that starts the plugin binary at path with
// LaunchAs, for EscapeConfig.Launch.
func Launcher(path string) func(t *testing.T, cred *syscall.Credential) Backend {
	return func(t *testing.T, cred *syscall.Credential) Backend {
		t.Helper()
		return LaunchAs(t, path, cred)
	}
}

// NullPackage is the import path of the null plugin, the control backend
// that Control builds.
const NullPackage = "github.com/skillhost/skillhost/cmd/skillhost-sandbox-null"

// Control starts the null plugin, the unconfined control backend of the
// escape suite, as the user cred (nil: the test's own), and stops it when
// the test ends: it is an EscapeConfig.Control. The first call builds
// NullPackage with the go command (go test puts its own first in PATH) in
// the test's working directory, so within whatever module the test belongs
// to, which requires github.com/skillhost/skillhost as any module using
// this package does, at the version it requires. The binary is kept, in a
// directory any user can read, until no test that started it is running.
func Control(t *testing.T, cred *syscall.Credential) Backend {
	t.Helper()
	path, err := nullBinary.acquire()
	if err != nil {
		t.Fatalf("conformance.Control: %v", err)
	}
	t.Cleanup(nullBinary.release) // runs after the plugin's own cleanup
	return LaunchAs(t, path, cred)
}

// nullBinary is the null plugin Control built, shared by the tests
// running at once and removed when the last of them ends.
var nullBinary built

type built struct {
	mu    sync.Mutex
	dir   string
	users int
}

func (b *built) acquire() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir == "" {
		dir, err := buildNull()
		if err != nil {
			return "", err
		}
		b.dir = dir
	}
	b.users++
	return filepath.Join(b.dir, "skillhost-sandbox-null"), nil
}

func (b *built) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.users--; b.users == 0 {
		os.RemoveAll(b.dir)
		b.dir = ""
	}
}

// buildNull builds NullPackage into a fresh directory that any user can
// read (the escape suite runs it as nobody) and returns the directory.
func buildNull() (string, error) {
	// go test puts its own GOROOT/bin first in the test's PATH.
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the null control plugin needs the go command: %v", err)
	}
	dir, err := os.MkdirTemp("", "skillhost-conformance-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	cmd := exec.Command(goCmd, "build", "-o", filepath.Join(dir, "skillhost-sandbox-null"), NullPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("go build %s: %v\n%s", NullPackage, err, strings.TrimSpace(string(out)))
	}
	return dir, nil
}
