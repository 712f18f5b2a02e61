package landlock_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/conformance"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// The one-shot fast path (shared/internal/wire's pipes) carries the contract's messages
// over two pipes instead of go-plugin's socket, TLS and gRPC; the
// confinement code is the same Execute either way. These tests run the
// escape and conformance suites with the plugins started as a one-shot host
// starts them, and the attacks the pipes themselves open.

// fastLaunch starts pkg's plugin on the fast path, as user cred (nil: this
// one), failing the test if it came up over go-plugin instead.
func fastLaunch(t testing.TB, pkg string, cred *syscall.Credential, env ...string) *pluginclient.Conn {
	t.Helper()
	var attr *syscall.SysProcAttr
	if cred != nil {
		attr = &syscall.SysProcAttr{Credential: cred}
	}
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{
		Path: testbin.Path(pkg), AutoMTLS: true, OneShot: true, SysProcAttr: attr,
		Env: append([]string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0", "SKILLHOST_TEST_PLUGIN_SECRET=plugin-secret"}, env...),
	})
	if err != nil {
		t.Fatalf("launch %s: %v", pkg, err)
	}
	t.Cleanup(conn.Close)
	if conn.SocketDir() != "" {
		t.Fatalf("%s came up over go-plugin (socket %s), not on the fast path", pkg, conn.SocketDir())
	}
	// What a one-shot host starts: the binary for one-shot hosts beside
	// the plugin, which the suites must judge.
	if want := pluginclient.OneShotPath(testbin.Path(pkg)); conn.Binary() != want {
		t.Fatalf("%s: started %s, want %s", pkg, conn.Binary(), want)
	}
	return conn
}

// fastEscapeConfig is escapeConfig on the fast path.
func fastEscapeConfig(env ...string) conformance.EscapeConfig {
	launch := func(pkg string) func(*testing.T, *syscall.Credential) conformance.Backend {
		return func(t *testing.T, cred *syscall.Credential) conformance.Backend {
			conn := fastLaunch(t, pkg, cred, env...)
			if pkg == landlockPkg && slices.Contains(env, noNamespaces) {
				landlockOnly(t, conn)
			}
			return conn
		}
	}
	cfg := conformance.EscapeConfig{Launch: launch(landlockPkg), Control: launch(nullPkg)}
	// There is no plugin socket on the fast path to attack, nor go-plugin's
	// variables in the plugin's environment to look for; the pipes that
	// replace the socket, and the environment, are attacked in
	// TestFastPathPipesAreOutOfReach.
	cfg.Only = func(name string) bool {
		return !strings.Contains(name, "plugin's own socket") && !strings.Contains(name, "plugin's environment via /proc")
	}
	return cfg
}

func TestEscapeSuiteFastPath(t *testing.T) { conformance.Escapes(t, fastEscapeConfig()) }

func TestEscapesWithoutNamespacesFastPath(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite without namespaces runs over go-plugin in -short")
	}
	cfg := fastEscapeConfig(noNamespaces)
	cfg.Only = func(name string) bool {
		// As TestEscapesWithoutNamespaces: what only the view removes is
		// left out.
		if strings.Contains(name, "extended attributes") || strings.Contains(name, "symlink's target") {
			return false
		}
		for _, s := range []string{"outside the grant", "write outside", "read ssh key", "a setsid process", "process group"} {
			if strings.Contains(name, s) {
				return true
			}
		}
		return false
	}
	conformance.Escapes(t, cfg)
}

func TestConformanceFastPath(t *testing.T) {
	conn := fastLaunch(t, landlockPkg, nil)
	if p, _ := conn.Probe(context.Background()); p.Status != shared.Healthy {
		t.Skipf("landlock is %s here: %s", p.Status, p.Reason)
	}
	conformance.Conformance(t, conn, conformance.Options{})
}

// fastLaunchPluginBinary starts the Landlock plugin binary itself on the
// fast path, as a one-shot host does for a pinned plugin or a run by name.
func fastLaunchPluginBinary(t *testing.T) *pluginclient.Conn {
	t.Helper()
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{
		Path: testbin.Path(landlockPkg), OneShot: true, NoOneShotBinary: true,
		Env: []string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	if conn.SocketDir() != "" || conn.Binary() != testbin.Path(landlockPkg) {
		t.Fatalf("started %s (socket %q), want the plugin binary on the fast path", conn.Binary(), conn.SocketDir())
	}
	return conn
}

// The plugin binary itself on the fast path: what a host whose pin covers
// the plugin starts for a one-shot run.
func TestConformanceFastPathPluginBinary(t *testing.T) {
	conn := fastLaunchPluginBinary(t)
	if p, _ := conn.Probe(context.Background()); p.Status != shared.Healthy {
		t.Skipf("landlock is %s here: %s", p.Status, p.Reason)
	}
	conformance.Conformance(t, conn, conformance.Options{})
}

func TestTeardownFastPath(t *testing.T) { conformance.Teardown(t, fastEscapeConfig(), 2) }

// pipeAttack tries to open, for writing, every descriptor of the plugin and
// of the host (this test process): on the fast path those include the
// pipes that carry calls and answers, through which a script could forge a
// call with a wider grant, or a result. It prints ESCAPED and the path for
// each it opens, and ESCAPED-environ if it reads the plugin's environment
// (which names the pipes).
const pipeAttack = `for f in /proc/$PLUGIN_PID/fd/* /proc/$HOST_PID/fd/*; do
  if timeout 2 sh -c 'exec 9>>"$1"' _ "$f" 2>/dev/null; then echo "ESCAPED $f"; fi
done
tr '\0' '\n' < "/proc/$PLUGIN_PID/environ" 2>/dev/null | grep -q SKILLHOST_PLUGIN_PIPE && echo ESCAPED-environ
echo done`

// TestFastPathPipesAreOutOfReach: a confined script cannot reach the fast
// path's pipes through /proc (Landlock's ptrace scope, and with the view
// the run's own PID namespace), with or without namespaces; the unconfined
// control can, which shows the attack is real.
func TestFastPathPipesAreOutOfReach(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pkg     string
		env     []string
		escapes bool
	}{
		{"control (null)", nullPkg, nil, true},
		{"landlock", landlockPkg, nil, false},
		{"landlock without namespaces", landlockPkg, []string{noNamespaces}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := fastLaunch(t, tc.pkg, nil, tc.env...)
			if slices.Contains(tc.env, noNamespaces) {
				landlockOnly(t, conn)
			}
			if p, err := conn.Probe(context.Background()); err != nil || p.Status != shared.Healthy {
				t.Skipf("the plugin cannot run here: %v %+v", err, p)
			}
			dir := t.TempDir()
			var out bytes.Buffer
			res, err := conn.Execute(context.Background(), shared.Request{
				RunID: "pipes", Argv: []string{"/bin/sh", "-c", pipeAttack}, Dir: dir, SkillDir: dir,
				Env:   []string{"PATH=/usr/bin:/bin", "PLUGIN_PID=" + strconv.Itoa(conn.Pid()), "HOST_PID=" + strconv.Itoa(os.Getpid())},
				Grant: shared.Grant{Timeout: 60 * time.Second, Trust: shared.TrustExternal}, OutputLimit: 1 << 20,
			}, func(b []byte) error { out.Write(b); return nil })
			if err != nil || !strings.Contains(out.String(), "done") {
				t.Fatalf("attack did not run: %v %+v %q", err, res, out.String())
			}
			if got := strings.Contains(out.String(), "ESCAPED"); got != tc.escapes {
				t.Errorf("opened the plugin's or the host's descriptors = %v, want %v:\n%s", got, tc.escapes, out.String())
			}
		})
	}
}

// The binary for one-shot hosts has no egress proxy: it does not claim
// network by name, and refuses a run by name rather than run it with the
// whole network or none. The plugin binary, started the same way, claims it.
func TestOneShotBinaryHasNoEgress(t *testing.T) {
	lean := fastLaunch(t, landlockPkg, nil)
	full := fastLaunchPluginBinary(t)
	for _, tc := range []struct {
		conn *pluginclient.Conn
		want bool
	}{{lean, false}, {full, true}} {
		info, err := tc.conn.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.Enforces.Egress != tc.want {
			t.Errorf("%s claims egress %v, want %v", tc.conn.Binary(), info.Enforces.Egress, tc.want)
		}
	}
	if p, _ := lean.Probe(context.Background()); p.Status != shared.Healthy {
		t.Skipf("landlock is %s here: %s", p.Status, p.Reason)
	}
	dir := t.TempDir()
	res, err := lean.Execute(context.Background(), shared.Request{
		RunID: "byname", Argv: []string{"/bin/echo", "ran"}, Dir: dir, SkillDir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Grant: shared.Grant{Network: true, Egress: &shared.Egress{Allow: []string{"example.com"}}, Timeout: 30 * time.Second},
	}, func([]byte) error { return nil })
	if err == nil || shared.RefusedFor(err) != shared.ReasonEgress || !strings.Contains(err.Error(), "skillhost-sandbox-landlock") {
		t.Errorf("a run by name through %s: %+v, %v; want an egress refusal naming the plugin binary", lean.Binary(), res, err)
	}
}
