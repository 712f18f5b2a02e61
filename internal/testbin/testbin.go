// Package testbin builds the project's real binaries for tests that need
// them (plugins talk to the host over go-plugin, so they must be separate
// processes). Binaries are built once per test process, without -race, into
// a temporary directory readable by any user.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
	dir   string
	// borrowed is set when dir is a parent test process's (EnvDir): its
	// binaries are used as they are and left for it to remove.
	borrowed bool
)

// EnvDir names the directory of binaries a test process hands to a copy
// of itself that it re-executes (in a namespace of its own, say), so the
// copy does not build them again.
const EnvDir = "SKILLHOST_TESTBIN_DIR"

// Dir is the directory Build put the binaries in ("" before Build).
func Dir() string {
	mu.Lock()
	defer mu.Unlock()
	return dir
}

// Build compiles the given ./cmd/... packages (relative to the module root)
// and returns the directory holding the binaries, named after their
// packages. A plugin ./cmd/skillhost-sandbox-NAME brings its lean
// supervisor ./cmd/skillhost-supervisor-NAME and its binary for one-shot
// hosts ./cmd/skillhost-oneshot-NAME, where there are, as an installation
// does; ./cmd/skillhost brings skillhost-supervisor-none. It
// is meant for TestMain; the caller removes the directory with Cleanup.
func Build(pkgs ...string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	// A borrowed directory needs no module: the error matters only below.
	root, rootErr := moduleRoot()
	if rootErr == nil {
		pkgs = withSupervisors(root, pkgs)
	}
	if d := os.Getenv(EnvDir); dir == "" && d != "" {
		dir, borrowed = d, true
	}
	if borrowed {
		for _, p := range pkgs {
			built[p] = filepath.Join(dir, filepath.Base(p))
		}
		return dir, nil
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "skillhost-testbin-")
		if err != nil {
			return "", err
		}
		// The escape suite runs plugins as an unprivileged user.
		if err := os.Chmod(d, 0o755); err != nil {
			return "", err
		}
		dir = d
	}
	if rootErr != nil {
		return "", rootErr
	}
	var todo []string
	for _, p := range pkgs {
		if _, ok := built[p]; !ok {
			todo = append(todo, p)
		}
	}
	if len(todo) > 0 {
		// As make build builds them: static, without gRPC's tracing.
		cmd := exec.Command("go", append([]string{"build", "-tags", "grpcnotrace", "-o", dir + "/"}, todo...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", strings.Join(todo, " "), err, out)
		}
		for _, p := range todo {
			built[p] = filepath.Join(dir, filepath.Base(p))
		}
	}
	return dir, nil
}

// Path returns where Build put the binary of pkg.
func Path(pkg string) string {
	mu.Lock()
	defer mu.Unlock()
	return built[pkg]
}

// Cleanup removes the binaries; a later Build starts afresh, so tests that
// clean up never leave others a directory that is gone.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" && !borrowed {
		os.RemoveAll(dir)
	}
	dir, built, borrowed = "", map[string]string{}, false
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside the skillhost module")
	}
	return filepath.Dir(gomod), nil
}

// withSupervisors adds to pkgs the lean supervisor binaries of the plugins
// (and of the CLI's in-process strategy) among them, and the plugins'
// binaries for one-shot hosts.
func withSupervisors(root string, pkgs []string) []string {
	out := append([]string(nil), pkgs...)
	for _, p := range pkgs {
		var companions []string
		if name, ok := strings.CutPrefix(p, "./cmd/skillhost-sandbox-"); ok {
			companions = []string{"./cmd/skillhost-supervisor-" + name, "./cmd/skillhost-oneshot-" + name}
		} else if p == "./cmd/skillhost" {
			companions = []string{"./cmd/skillhost-supervisor-none"}
		}
		for _, c := range companions {
			if _, err := os.Stat(filepath.Join(root, c)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
