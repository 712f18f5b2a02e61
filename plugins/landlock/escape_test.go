package landlock_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/conformance"
	"github.com/skillhost/skillhost/shared/pluginclient"
	"github.com/skillhost/skillhost/shared/runner"
)

// escapeConfig starts the real Landlock plugin and, as the unconfined
// control, the null plugin, both as the given user, each with env added.
func escapeConfig(env ...string) conformance.EscapeConfig {
	launch := func(pkg string) func(*testing.T, *syscall.Credential) conformance.Backend {
		return func(t *testing.T, cred *syscall.Credential) conformance.Backend {
			var attr *syscall.SysProcAttr
			if cred != nil {
				attr = &syscall.SysProcAttr{Credential: cred}
			}
			conn, err := pluginclient.Launch(pluginclient.LaunchConfig{
				Path: testbin.Path(pkg), AutoMTLS: true, SysProcAttr: attr,
				Env: append([]string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0", "SKILLHOST_TEST_PLUGIN_SECRET=plugin-secret"}, env...),
			})
			if err != nil {
				t.Fatalf("launch %s: %v", pkg, err)
			}
			t.Cleanup(conn.Close)
			if pkg == landlockPkg && slices.Contains(env, noNamespaces) {
				landlockOnly(t, conn)
			}
			return conn
		}
	}
	// Strict: the run's PID-namespace init (the supervisor) is outside the
	// command's Landlock domain, so signals and ptrace to $PPID must fail
	// even though they stay inside the namespaces.
	return conformance.EscapeConfig{Launch: launch(landlockPkg), Control: launch(nullPkg), Strict: true}
}

// noNamespaces makes the plugin start runs as on a kernel that refuses
// namespaces.
const noNamespaces = runner.EnvNoNamespaces + "=1"

// landlockOnly opts conn's plugin into running without the view.
func landlockOnly(t *testing.T, conn *pluginclient.Conn) {
	t.Helper()
	if problems, err := conn.SetConfig(context.Background(), []byte(`{"landlock_only": true}`)); err != nil || problems != nil {
		t.Fatalf("SetConfig: %v %v", problems, err)
	}
}

func TestEscapeSuite(t *testing.T) { conformance.Escapes(t, escapeConfig()) }

// The two attacks on the teardown itself, 10 times each (3 with -short).
func TestTeardownCannotBeOutrun(t *testing.T) {
	rounds := 10
	if testing.Short() {
		rounds = 3
	}
	conformance.Teardown(t, escapeConfig(), rounds)
}

// Where the kernel refuses namespaces, the helper runs without them and
// seccomp refuses metadata changes everywhere instead of the read-only
// view: the attacks on files outside the grant still fail, and setsid'd
// processes still do not outlive the run. (Fork bombs and starvation are
// left out: without a PID namespace the teardown walks /proc and is not
// held to the deadline's bound.)
func TestEscapesWithoutNamespaces(t *testing.T) {
	cfg := escapeConfig(noNamespaces)
	cfg.Only = func(name string) bool {
		// What only the view removes: metadata of paths outside the grant.
		if strings.Contains(name, "extended attributes") || strings.Contains(name, "symlink's target") {
			return false
		}
		for _, s := range []string{"outside the grant", "set-uid", "set-gid", "renice", "write outside", "read ssh key", "a granted directory swapped", "a setsid process", "first thread ended", "too deep", "a write grant created", "lease", "process group"} {
			if strings.Contains(name, s) {
				return true
			}
		}
		return false
	}
	conformance.Escapes(t, cfg)
}

// Where namespaces are refused the plugin refuses to run, naming the
// remedy, unless the operator opted into Landlock-only mode; then a run
// says in its result what it lacks, and one that got them does not.
func TestResultSaysWhenNamespacesWereRefused(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		var env []string
		if refuse {
			env = append(env, runner.EnvNoNamespaces+"=1")
		}
		conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: testbin.Path(landlockPkg), AutoMTLS: true,
			Env: append([]string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}, env...)})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if refuse {
			p, err := conn.Probe(context.Background())
			if err != nil || p.Status == shared.Healthy || !strings.Contains(p.Reason, "landlock_only") {
				t.Errorf("without namespaces or landlock_only: probe %+v, %v; want a refusal naming landlock_only", p, err)
			}
			landlockOnly(t, conn)
		}
		if p, err := conn.Probe(context.Background()); err != nil || p.Status != shared.Healthy {
			t.Skipf("the landlock plugin cannot confine here: %v %+v", err, p)
		}
		dir := t.TempDir()
		res, err := conn.Execute(context.Background(), shared.Request{
			RunID: "ns", Argv: []string{"/bin/true"}, Dir: dir, SkillDir: dir,
			Grant: shared.Grant{Timeout: 30 * time.Second, Trust: shared.TrustExternal},
		}, func([]byte) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		noted := strings.Contains(strings.Join(res.NotEnforced, ";"), "namespaces")
		if noted != refuse {
			t.Errorf("refused=%v: not enforced %q", refuse, res.NotEnforced)
		}
	}
}

// A run's temporary directory does not outlive an interrupted run (issue
// 26, attack 11). With the view it is a tmpfs of the run's namespace, so
// nothing is made on the host at all; in Landlock-only mode a plugin killed
// mid-run leaves its directory, and the next plugin removes it.
func TestTempDirsDoNotOutliveAKilledPlugin(t *testing.T) {
	tmp := t.TempDir()
	launch := func(env ...string) *pluginclient.Conn {
		conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: testbin.Path(landlockPkg), AutoMTLS: true,
			Env: append([]string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0", "TMPDIR=" + tmp}, env...)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conn.Close)
		return conn
	}
	leftovers := func() []string {
		entries, _ := os.ReadDir(tmp)
		var out []string
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "skillhost-run-") {
				out = append(out, e.Name())
			}
		}
		return out
	}
	dir := t.TempDir()
	run := func(conn *pluginclient.Conn, script string, started chan<- struct{}) {
		conn.Execute(context.Background(), shared.Request{
			RunID: "tmp", Argv: []string{"/bin/sh", "-c", script}, Dir: dir, SkillDir: dir,
			Grant: shared.Grant{Timeout: 60 * time.Second, Trust: shared.TrustExternal},
		}, func(b []byte) error {
			if started != nil && strings.Contains(string(b), "ready") {
				close(started)
				started = nil
			}
			return nil
		})
	}
	for _, view := range []bool{true, false} {
		var conn *pluginclient.Conn
		if view {
			conn = launch()
		} else {
			conn = launch(noNamespaces)
			landlockOnly(t, conn)
		}
		if p, err := conn.Probe(context.Background()); err != nil || p.Status != shared.Healthy {
			t.Skipf("the landlock plugin cannot confine here: %v %+v", err, p)
		}
		started := make(chan struct{})
		go run(conn, `echo loot > "$TMPDIR/loot"; echo ready; sleep 60`, started)
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			t.Fatal("the run never started")
		}
		syscall.Kill(conn.Pid(), syscall.SIGKILL)
		left := leftovers()
		if view && len(left) > 0 {
			t.Errorf("with the view, the run made %v on the host", left)
		}
		if !view {
			if len(left) != 1 {
				t.Fatalf("control: a plugin killed mid-run in Landlock-only mode left %v, want its one directory", left)
			}
			next := launch(noNamespaces)
			landlockOnly(t, next)
			run(next, "true", nil)
			if left := leftovers(); len(left) > 0 {
				t.Errorf("the next plugin did not remove %v", left)
			}
		}
	}
}
