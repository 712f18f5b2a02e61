//go:build unix

package conformance_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/shared/conformance"
)

// Control builds and starts the null plugin, which passes the conformance
// suite; as root it starts it as nobody too, from the same binary; and the
// binary is gone once no test holds it.
func TestControl(t *testing.T) {
	var path string
	t.Run("own user", func(t *testing.T) {
		b := conformance.Control(t, nil)
		info, err := b.Info(context.Background())
		if err != nil || info.Name != "null" {
			t.Fatalf("Info = %+v, %v; want the null plugin", info, err)
		}
		path = exePath(t, b.Pid())
		conformance.Conformance(t, b, conformance.Options{})
	})
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the control binary %s is left behind: %v", path, err)
	}
	t.Run("nobody", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("starting a plugin as another user takes root")
		}
		nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
		b := conformance.Control(t, nobody)
		// Launcher and LaunchAs start a given binary the same way.
		other := conformance.Launcher(exePath(t, b.Pid()))(t, nobody)
		for _, b := range []conformance.Backend{b, other} {
			if uid := procUID(t, b.Pid()); uid != "65534" {
				t.Errorf("plugin %d runs as uid %s, want nobody", b.Pid(), uid)
			}
			if _, err := b.Info(context.Background()); err != nil {
				t.Errorf("Info as nobody: %v", err)
			}
		}
	})
}

// A module other than skillhost's, requiring it, gets the control backend
// from Control alone: the go command builds the null plugin within that
// module. (Offline: the module cache already holds what skillhost needs.)
func TestControlFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a module of its own")
	}
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(strings.TrimSpace(string(root)))
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/mybackend\n\ngo 1.26\n\nrequire github.com/skillhost/skillhost v0.0.0\n\nreplace github.com/skillhost/skillhost => " + repo + "\n",
		"go.sum": string(sum),
		"control_test.go": `package mybackend

import (
	"context"
	"testing"

	"github.com/skillhost/skillhost/shared/conformance"
)

func TestControl(t *testing.T) {
	info, err := conformance.Control(t, nil).Info(context.Background())
	if err != nil || info.Name != "null" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in another module: %v\n%s", err, out)
	}
}

func exePath(t *testing.T, pid int) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	path, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func procUID(t *testing.T, pid int) string {
	t.Helper()
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)[1] // effective
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return ""
}
