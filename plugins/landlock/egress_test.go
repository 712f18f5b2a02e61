package landlock_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared/conformance"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// envEgressNamespace is set in the copy of the test binary that runs in a
// network and mount namespace of the test's own: its value is the hosts
// file that names the suite's servers there.
const envEgressNamespace = "SKILLHOST_TEST_EGRESS_NS"

// TestEgressSuite runs the portable egress suite against the real plugin,
// inside a network namespace the test makes (only its loopback, with the
// suite's names in a hosts file bound over /etc/hosts there): nothing it
// does reaches the machine's network.
func TestEgressSuite(t *testing.T) {
	if os.Getenv(envEgressNamespace) == "" {
		inOwnNetwork(t, "TestEgressSuite")
		return
	}
	launch := func(pkg string) func(*testing.T, *syscall.Credential, []string) conformance.Backend {
		return func(t *testing.T, cred *syscall.Credential, env []string) conformance.Backend {
			var attr *syscall.SysProcAttr
			if cred != nil {
				attr = &syscall.SysProcAttr{Credential: cred}
			}
			conn, err := pluginclient.Launch(pluginclient.LaunchConfig{
				Path: testbin.Path(pkg), AutoMTLS: true, SysProcAttr: attr,
				Env: append([]string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}, env...),
			})
			if err != nil {
				t.Fatalf("launch %s: %v", pkg, err)
			}
			t.Cleanup(conn.Close)
			return conn
		}
	}
	conformance.Egress(t, conformance.EgressConfig{Launch: launch(landlockPkg), Control: launch(nullPkg)})
}

// inOwnNetwork runs the test named run again in a copy of this binary,
// in new network and mount namespaces (root only), and reports its
// outcome as this test's.
func inOwnNetwork(t *testing.T, run string) {
	if os.Geteuid() != 0 {
		t.Skip("making the test's own network namespace needs root")
	}
	var hosts strings.Builder
	hosts.WriteString("127.0.0.1 localhost\n::1 localhost\n")
	for name, addr := range conformance.EgressHosts {
		fmt.Fprintf(&hosts, "%s %s\n", addr, name)
	}
	file := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(file, []byte(hosts.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=^" + run + "$", "-test.count=1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envEgressNamespace+"="+file, testbin.EnvDir+"="+testbin.Dir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Log(out.String())
	if err != nil {
		t.Fatalf("%s in its own network namespace: %v", run, err)
	}
	if strings.Contains(out.String(), "no tests to run") {
		t.Fatal("the copy ran no test")
	}
}

// enterOwnNetwork, in the copy, makes its mounts private, binds the hosts
// file over /etc/hosts and brings loopback up.
func enterOwnNetwork(hosts string) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	if err := syscall.Mount(hosts, "/etc/hosts", "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", hosts, err)
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set lo up: %v %s", err, out)
	}
	return nil
}
