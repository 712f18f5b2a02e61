//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/conformance"
)

// plugin is the example built from this directory, into a directory anyone
// can read: the suites also run it as nobody.
var plugin string

// envPlugin hands the built plugin to a copy of this test run as nobody.
const envPlugin = "PLUGIN_BWRAP_TEST_PLUGIN"

func TestMain(m *testing.M) {
	// The escape suite's attacks on the host's environment need a secret
	// there from the start.
	conformance.WithHostSecret()
	if p := os.Getenv(envPlugin); p != "" {
		plugin = p
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "plugin-bwrap-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugin = filepath.Join(dir, "skillhost-sandbox-bwrap")
	if out, err := exec.Command("go", "build", "-o", plugin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needBwrap skips where bubblewrap is missing or cannot make its
// namespaces here (the plugin's own Probe says which); under CI, where
// .ci/deps installs it, that is a failure.
func needBwrap(t *testing.T) {
	t.Helper()
	p, err := bwrap{}.Probe(context.Background())
	if err == nil && p.Status == shared.Healthy {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("bwrap: %s %v", p.Reason, err)
	}
	t.Skipf("bwrap: %s %v", p.Reason, err)
}

func TestConformance(t *testing.T) {
	needBwrap(t)
	conformance.Conformance(t, conformance.Launch(t, plugin), conformance.Options{})
}

// As root, the conformance suite runs again as nobody: this test binary,
// copied beside the plugin where nobody can read it, runs TestConformance
// as nobody (the suite's own directories are then nobody's).
func TestConformanceAsNobody(t *testing.T) {
	needBwrap(t)
	if os.Geteuid() != 0 || os.Getenv(envPlugin) != "" {
		t.Skip("needs root, to start a copy of the test as nobody")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	test := filepath.Join(filepath.Dir(plugin), "plugin-bwrap.test")
	if err := os.WriteFile(test, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(test, "-test.run", "^TestConformance$", "-test.count", "1", "-test.v")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp", envPlugin + "=" + plugin, "CI=" + os.Getenv("CI")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestConformance (") {
		t.Fatalf("TestConformance as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}

func TestEscapes(t *testing.T) {
	needBwrap(t)
	conformance.Escapes(t, conformance.EscapeConfig{
		Launch:  conformance.Launcher(plugin),
		Control: conformance.Control,
	})
}

// skillhost runs the example skills with --strategy bwrap once the plugin
// is in its plugin directory (beside it).
func TestSkillhostRunsTheExampleSkills(t *testing.T) {
	needBwrap(t)
	dir := filepath.Dir(plugin)
	skillhost := filepath.Join(dir, "skillhost")
	if out, err := exec.Command("go", "build", "-o", skillhost, "github.com/skillhost/skillhost/cmd/skillhost").CombinedOutput(); err != nil {
		t.Fatalf("go build skillhost: %v\n%s", err, out)
	}
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"csv-summary", "summarize", "--", "examples/data/sales.csv"}, "6 rows, 5 columns"},
		{[]string{"text-stats", "top_words", "--", "-n", "1", "examples/data/article.txt"}, "scripts"},
		{[]string{"json-tools", "keys", "--", "examples/data/inventory.json", "items.0"}, "sku"},
	} {
		cmd := exec.Command(skillhost, append([]string{"--config", "examples/skillhost.yaml", "run", "--strategy", "bwrap"}, tc.args...)...)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "XDG_CACHE_HOME="+home)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("skillhost run --strategy bwrap %s: %v\n%s", strings.Join(tc.args, " "), err, out)
		}
	}
}

// A protected path of a write grant is bound read-only after the grant; a
// missing one is left to the host's check; one that is a symbolic link
// refuses the run rather than stay writable.
func TestProtect(t *testing.T) {
	work := t.TempDir()
	hooks := filepath.Join(work, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(work, "link")
	if err := os.Symlink(hooks, link); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, tc := range []struct {
		name      string
		protected []string
		wantArgs  []string
		wantErr   bool
	}{
		{"existing", []string{hooks}, []string{"--ro-bind-fd", "3", hooks}, false},
		{"missing", []string{filepath.Join(work, ".bashrc")}, nil, false},
		{"outside the write grant", []string{outside}, nil, false},
		{"a symbolic link", []string{link}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &mounts{}
			defer m.close()
			err := m.protect(shared.Grant{FSWrite: []string{work}, Protected: tc.protected})
			if (err != nil) != tc.wantErr {
				t.Fatalf("protect: %v, want error %v", err, tc.wantErr)
			}
			if strings.Join(m.args, " ") != strings.Join(tc.wantArgs, " ") {
				t.Errorf("args %q, want %q", m.args, tc.wantArgs)
			}
		})
	}
}

// The filter is whole struct sock_filter records, as bwrap requires.
func TestSeccompProgram(t *testing.T) {
	prog, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) == 0 || len(prog)%8 != 0 || len(prog)/8 > 4096 {
		t.Fatalf("program of %d bytes: want a whole number of 8-byte instructions, at most 4096", len(prog))
	}
}
