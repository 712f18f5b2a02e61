package thirdparty_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// module is the skillhost module's path, as a third party requires it.
const module = "github.com/skillhost/skillhost"

// examples/plugin-echo, copied into a module of its own outside the
// repository that requires skillhost through a replace, builds and passes
// its own conformance and escape suites there: its test uses only what a
// third party can import, and conformance.Control builds the null control
// inside that module. The go command works offline, from the module and
// build caches this repository's own build filled.
func TestEchoExampleInAModuleOfItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and tests the example in a module of its own (a minute or more)")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("needs the go command to build a module outside the repository: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	env := offlineEnv(t, goCmd, root)
	// Everything the example needs must already be in the module cache:
	// the copy may not download anything.
	if out, err := run(goCmd, root, env, "list", "-deps", "-test", "./examples/plugin-echo"); err != nil {
		t.Skipf("the module cache lacks what the example needs, and this test does not download (GOPROXY=off): %v\n%s", err, out)
	}

	dir := t.TempDir()
	if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("the temporary module %s is inside the repository %s", dir, root)
	}
	for _, f := range []string{"main.go", "main_test.go"} {
		copyFile(t, filepath.Join(root, "examples", "plugin-echo", f), filepath.Join(dir, f))
	}
	// The sums of the modules skillhost requires, as `go get` would record
	// them; -mod=mod adds the requirements the example's imports need.
	copyFile(t, filepath.Join(root, "go.sum"), filepath.Join(dir, "go.sum"))
	for _, args := range [][]string{
		{"mod", "init", "example.com/skillhost-sandbox-echo"},
		{"mod", "edit", "-require=" + module + "@v0.0.0", "-replace=" + module + "=" + root},
	} {
		if out, err := run(goCmd, dir, env, args...); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := run(goCmd, dir, env, "test", "-count=1", "-v", "./...")
	if err != nil {
		t.Fatalf("go test in the copied module %s: %v\n%s", dir, err, out)
	}
	for _, want := range []string{"--- PASS: TestConformance", "--- PASS: TestEscapes"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test in the copied module did not report %q:\n%s", want, out)
		}
	}
	if os.Geteuid() == 0 && !strings.Contains(out, "--- PASS: TestEscapes/nobody") {
		t.Errorf("run as root, the escape suite did not also pass as nobody:\n%s", out)
	}
	t.Logf("the copied module's tests:\n%s", lastLines(out, 3))
}

// offlineEnv is the test's environment for the go command with the
// module and build caches of the repository's own build, no proxy, no
// workspace and no toolchain switch.
func offlineEnv(t *testing.T, goCmd, root string) []string {
	t.Helper()
	out, err := run(goCmd, root, os.Environ(), "env", "GOMODCACHE", "GOCACHE")
	if err != nil {
		t.Skipf("go env: %v\n%s", err, out)
	}
	caches := strings.Fields(out)
	if len(caches) != 2 {
		t.Fatalf("go env GOMODCACHE GOCACHE printed %q", out)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOFLAGS", "GOPROXY", "GOWORK", "GOTOOLCHAIN", "GOMODCACHE", "GOCACHE", "GONOSUMDB", "GOSUMDB":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOMODCACHE="+caches[0], "GOCACHE="+caches[1])
}

// run runs the go command in dir, returning its combined output.
func run(goCmd, dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(goCmd, args...)
	cmd.Dir, cmd.Env = dir, env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
