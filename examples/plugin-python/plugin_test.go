//go:build unix

// Package pyecho_test runs the Python example plugin through the real host
// side (pluginclient.Launch, go-plugin, mutual TLS) and the contract's conformance
// suite: the proof that docs/contract.md is enough to write a plugin in
// another language.
package pyecho_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/conformance"
	"github.com/skillhost/skillhost/shared/pluginclient"
	"github.com/skillhost/skillhost/shared/procstat"
)

// python is Debian's interpreter, the one the plugin's #! line names.
const python = "/usr/bin/python3"

// envHelperHost turns the test binary into a host that starts the plugin,
// starts a long command in it, reports both pids and waits to be killed.
const envHelperHost = "PYECHO_TEST_HELPER_HOST"

// nullPkg is the unconfined control of the escape suite.
const nullPkg = "./cmd/skillhost-sandbox-null"

func TestMain(m *testing.M) {
	if os.Getenv(envHelperHost) == "1" {
		os.Exit(helperHost())
	}
	if _, err := testbin.Build(nullPkg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// pluginPath returns the plugin's absolute path, or skips the test when
// Debian's Python modules are missing; in CI (CI=true) it fails instead,
// because CI installs them (.ci/deps) and a skip there would hide a broken
// contract.
func pluginPath(t testing.TB) string {
	t.Helper()
	out, err := exec.Command(python, "-c", "import grpc, google.protobuf").CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		msg := fmt.Sprintf("the Python plugin needs %s with python3-grpcio and python3-protobuf "+
			"(apt-get install -y python3-grpcio python3-protobuf, or .ci/deps): %v: %s",
			python, err, lines[len(lines)-1])
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	p, err := filepath.Abs("skillhost-sandbox-pyecho")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func launch(t testing.TB, cfg pluginclient.LaunchConfig) *pluginclient.Conn {
	t.Helper()
	cfg.Path = pluginPath(t)
	if cfg.Env == nil {
		cfg.Env = []string{"PATH=/usr/bin:/bin"}
	}
	conn, err := pluginclient.Launch(cfg)
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// TestConformance is the contract's suite over mutual TLS, as skillhost
// launches plugins.
func TestConformance(t *testing.T) {
	conn := launch(t, pluginclient.LaunchConfig{AutoMTLS: true})
	if conn.ContractVersion != shared.ContractVersion {
		t.Errorf("negotiated contract version %d, want %d", conn.ContractVersion, shared.ContractVersion)
	}
	conformance.Conformance(t, conn, conformance.Options{})
}

// TestEscapes runs the portable escape suite. The plugin claims only
// timeouts, so the attacks on a run's lifetime are the ones that apply
// (setsid'd escapees, SIGTERM ignored, stdout closed, a fork bomb, a
// starved supervisor); each must also work under a plain exec to count.
// As root the suite repeats them as nobody.
func TestEscapes(t *testing.T) {
	path := pluginPath(t)
	conformance.Escapes(t, conformance.EscapeConfig{Launch: launchAs(path, true), Control: launchAs(testbin.Path(nullPkg), false)})
}

// launchAs starts the plugin at path as the escape suite's user (nil: the
// test's own); interpreted marks the Python plugin, which runs from the
// checkout.
func launchAs(path string, interpreted bool) func(*testing.T, *syscall.Credential) conformance.Backend {
	return func(t *testing.T, cred *syscall.Credential) conformance.Backend {
		var attr *syscall.SysProcAttr
		if cred != nil {
			if interpreted {
				runnableBy(t, path, cred)
			}
			attr = &syscall.SysProcAttr{Credential: cred}
		}
		conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: path, AutoMTLS: true, SysProcAttr: attr,
			Env: []string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0"}})
		if err != nil {
			t.Fatalf("launch %s: %v", path, err)
		}
		t.Cleanup(conn.Close)
		return conn
	}
}

// runnableBy skips the suite's run as cred's user when that user cannot
// run the plugin at all: unlike a Go binary, which testbin puts where anyone
// can read it, the Python plugin is interpreted from the checkout, and a
// checkout in a private directory (a CI runner's home, say) is closed to
// nobody. Run without the magic cookie, a plugin that could import all its
// modules says that skillhost starts it and exits.
func runnableBy(t *testing.T, path string, cred *syscall.Credential) {
	t.Helper()
	cmd := exec.Command(path)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "skillhost starts it") {
		t.Skipf("uid %d cannot run the plugin from this checkout (%s is not readable by it): %s", cred.Uid, filepath.Dir(path), out)
	}
}

// TestBackstop stops the supervisor (SIGSTOP: a starved supervisor at its
// worst, not even its lifeline thread runs) under a command that ignores
// SIGTERM and has a setsid'd child. The plugin itself must then kill the
// supervisor's tree and the supervisor, return within timeout + grace +
// 1 s (plus headroom for a busy machine) and leave nothing running.
func TestBackstop(t *testing.T) {
	conn := launch(t, pluginclient.LaunchConfig{AutoMTLS: true})
	req := request(t, "/bin/bash", "-c", `trap '' TERM
setsid bash -c "trap '' TERM; exec sleep 300" </dev/null >/dev/null 2>&1 &
echo "$PPID $$ $!"
while :; do sleep 1; done`)
	req.Grant.Timeout, req.KillGrace = time.Second, 200*time.Millisecond
	var pids []int
	start := time.Now()
	res, err := conn.Execute(context.Background(), req, func(b []byte) error {
		if pids != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("the command said %q", b)
			}
			pids = append(pids, n)
		}
		if len(pids) != 3 {
			return fmt.Errorf("the command said %q", b)
		}
		// Without a working backstop the call would never return: the
		// supervisor resumes after a minute, so the test fails as late.
		time.AfterFunc(time.Minute, func() { _ = syscall.Kill(pids[0], syscall.SIGCONT) })
		return syscall.Kill(pids[0], syscall.SIGSTOP)
	})
	took := time.Since(start)
	if err != nil || len(pids) != 3 {
		t.Fatalf("%v, pids %v", err, pids)
	}
	if !res.TimedOut || res.Signal != "SIGKILL" {
		t.Errorf("got %+v; want a timeout ended by SIGKILL", res)
	}
	// The promise is timeout + grace + 1 s; the rest is headroom for a busy
	// machine, far below the minute a missing backstop would take.
	if limit := req.Grant.Timeout + req.KillGrace + time.Second + 14*time.Second; took > limit {
		t.Errorf("returned after %v, past %v", took, limit)
	}
	for i, what := range []string{"supervisor", "command", "setsid'd child"} {
		if procstat.Alive(pids[i]) {
			_ = syscall.Kill(pids[i], syscall.SIGKILL)
			t.Errorf("the %s (pid %d) outlived the run", what, pids[i])
		}
	}
	t.Logf("returned after %v", took)
}

// TestSupervisorKilled: a command that kills its own supervisor (it may:
// same user) must not be left running on its own. The plugin recognises it
// by pid and start time and kills it with its group.
func TestSupervisorKilled(t *testing.T) {
	conn := launch(t, pluginclient.LaunchConfig{AutoMTLS: true})
	req := request(t, "/bin/bash", "-c", `sleep 300 & echo "$$ $!"; kill -KILL "$PPID"; wait`)
	start := time.Now()
	out, res, err := execute(conn, req)
	took := time.Since(start)
	var pids [2]int
	if _, serr := fmt.Sscanf(out, "%d %d", &pids[0], &pids[1]); err != nil || serr != nil {
		t.Fatalf("%v %v, output %q", err, serr, out)
	}
	if res.Signal != "SIGKILL" || res.TimedOut {
		t.Errorf("got %+v; want a run killed before its timeout", res)
	}
	if took > 20*time.Second { // headroom for a busy machine, below the timeout
		t.Errorf("returned after %v; the 30 s timeout should not be what ended it", took)
	}
	for i, what := range []string{"command", "command's child"} {
		if procstat.Alive(pids[i]) {
			_ = syscall.Kill(pids[i], syscall.SIGKILL)
			t.Errorf("the %s (pid %d) outlived its supervisor", what, pids[i])
		}
	}
}

// TestPlaintext: without SKILLHOST_TLS_FD the plugin serves without TLS.
func TestPlaintext(t *testing.T) {
	conn := launch(t, pluginclient.LaunchConfig{AutoMTLS: false})
	info, err := conn.Info(context.Background())
	if err != nil || info.Name != "pyecho" || !info.Enforces.Timeout || info.Enforces.FSRead {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}

// TestHealthAndCookie: go-plugin's own client can ping the plugin (the
// grpc.health.v1 check of the service "plugin"), and without the magic
// cookie the plugin refuses to serve.
func TestHealthAndCookie(t *testing.T) {
	path := pluginPath(t)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  shared.ContractVersion,
			MagicCookieKey:   shared.HandshakeCookieKey,
			MagicCookieValue: shared.HandshakeCookieValue,
		},
		VersionedPlugins: map[int]plugin.PluginSet{shared.ContractVersion: {}},
		Cmd:              exec.Command(path),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		SkipHostEnv:      true,
		Logger:           hclog.NewNullLogger(),
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	if err := rpc.Ping(); err != nil {
		t.Errorf("health check of %q: %v", plugin.GRPCServiceName, err)
	}

	cmd := exec.Command(path)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "skillhost starts it") {
		t.Errorf("without the cookie: %v, %q; want exit status 1 and an explanation", err, out)
	}
}

func request(t *testing.T, argv ...string) shared.Request {
	dir := t.TempDir()
	return shared.Request{
		RunID: t.Name(), Argv: argv, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Grant:       shared.Grant{FSRead: []string{dir}, FSWrite: []string{dir}, Timeout: 30 * time.Second, Trust: shared.TrustExternal},
		OutputLimit: 1 << 20, KillGrace: 500 * time.Millisecond,
	}
}

func execute(conn *pluginclient.Conn, req shared.Request) (string, shared.Result, error) {
	var mu sync.Mutex
	var out bytes.Buffer
	res, err := conn.Execute(context.Background(), req, func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		out.Write(b)
		return nil
	})
	return out.String(), res, err
}

// TestRequestDetails covers what the suite leaves to each backend: exact
// non-ASCII argv, the directory, the truncation marker's exact text, a
// command that cannot start, Explain's absence and best-effort reporting.
func TestRequestDetails(t *testing.T) {
	conn := launch(t, pluginclient.LaunchConfig{AutoMTLS: true})

	t.Run("ArgvBytes", func(t *testing.T) {
		arg := "é ☃ tab\there \x01 'quoted' $HOME"
		out, res, err := execute(conn, request(t, "/bin/sh", "-c", `printf '%s|' "$@"; pwd`, "sh", arg, ""))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v %+v", err, res)
		}
		if want := arg + "||"; !strings.HasPrefix(out, want) {
			t.Fatalf("argv arrived as %q, want prefix %q", out, want)
		}
	})

	t.Run("TruncationMarker", func(t *testing.T) {
		req := request(t, "/usr/bin/head", "-c", "5000", "/dev/zero")
		req.OutputLimit = 100
		out, res, err := execute(conn, req)
		want := strings.Repeat("\x00", 100) + "\n[output truncated: exceeded 100 bytes]\n"
		if err != nil || !res.Truncated || out != want {
			t.Fatalf("got %q %+v %v; want the Go runner's marker", out, res, err)
		}
	})

	t.Run("SetupError", func(t *testing.T) {
		_, _, err := execute(conn, request(t, "/nonexistent/program"))
		if err == nil || errors.Is(err, pluginclient.ErrCrashed) || !strings.Contains(err.Error(), "setup failed") || !strings.Contains(err.Error(), "/nonexistent/program") {
			t.Fatalf("err = %v; want a setup error naming the program, not a crash", err)
		}
		if _, err := conn.Info(context.Background()); err != nil {
			t.Fatalf("plugin unusable after a setup error: %v", err)
		}
	})

	t.Run("ExplainUnimplemented", func(t *testing.T) {
		_, err := conn.Executor.(shared.Explainer).Explain(context.Background(), request(t, "/bin/true"))
		if !errors.Is(err, shared.ErrNotExplainable) {
			t.Fatalf("Explain: %v; want ErrNotExplainable", err)
		}
	})

	t.Run("BestEffort", func(t *testing.T) {
		req := request(t, "/bin/true")
		req.BestEffort = true
		_, res, err := execute(conn, req)
		if err != nil || len(res.NotEnforced) == 0 {
			t.Fatalf("%v %+v; a passthrough backend must list what it did not enforce", err, res)
		}
	})
}

// TestLogsAndShutdown: the plugin's hclog JSON lines reach the host's
// logger at their level with their fields, and closing the connection
// (GRPCController.Shutdown) ends the plugin without the host having to
// kill it.
func TestLogsAndShutdown(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{
		Level: hclog.Debug, JSONFormat: true,
		Output: writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) }),
	})
	conn := launch(t, pluginclient.LaunchConfig{AutoMTLS: true, Logger: logger})
	pid := conn.Pid()
	if _, err := conn.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if procstat.Alive(pid) {
		t.Errorf("plugin %d still running after Close", pid)
	}
	mu.Lock()
	text := logs.String()
	mu.Unlock()
	if !strings.Contains(text, `"@message":"plugin address"`) || !strings.Contains(text, `"network":"unix"`) {
		t.Errorf("the plugin's debug log did not reach the host as a parsed entry:\n%s", text)
	}
	if strings.Contains(text, "failed to exit gracefully") {
		t.Errorf("the host had to kill the plugin; Shutdown did not end it:\n%s", text)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestLifeline kills a host with SIGKILL while the plugin runs a command:
// the plugin must see its lifeline break, stop the command and exit.
func TestLifeline(t *testing.T) {
	pluginPath(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelperHost+"=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper host: %v", err)
	}
	var pluginPid, commandPid int
	if _, err := fmt.Sscanf(line, "%d %d", &pluginPid, &commandPid); err != nil {
		t.Fatalf("helper host said %q: %v", line, err)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	for _, p := range []struct {
		what string
		pid  int
	}{{"plugin", pluginPid}, {"command", commandPid}} {
		deadline := time.Now().Add(20 * time.Second)
		for procstat.Alive(p.pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if procstat.Alive(p.pid) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			t.Errorf("the %s (pid %d) outlived its host", p.what, p.pid)
		}
	}
}

func helperHost() int {
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{
		Path: "./skillhost-sandbox-pyecho", AutoMTLS: true, Env: []string{"PATH=/usr/bin:/bin"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, _ := os.Getwd()
	req := shared.Request{
		Argv: []string{"/bin/sh", "-c", "echo $$; exec sleep 60"}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Grant: shared.Grant{Timeout: time.Minute}, KillGrace: time.Second,
	}
	reported := false
	_, err = conn.Execute(context.Background(), req, func(b []byte) error {
		if !reported {
			reported = true
			fmt.Printf("%d %s\n", conn.Pid(), strings.TrimSpace(string(b)))
		}
		return nil
	})
	fmt.Fprintln(os.Stderr, "helper host: the command ended before the host was killed:", err)
	return 1
}

// TestStubsCurrent regenerates the committed Python stubs and compares
// them, so a change to executor.proto cannot leave the Python plugin
// behind. It needs Debian's protoc and grpc_python_plugin.
func TestStubsCurrent(t *testing.T) {
	for _, tool := range []string{"protoc", "grpc_python_plugin"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found (apt-get install -y protobuf-compiler protobuf-compiler-grpc)", tool)
		}
	}
	out := t.TempDir()
	cmd := exec.Command("./generate.sh")
	cmd.Env = append(os.Environ(), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, b)
	}
	fresh, err := filepath.Glob(filepath.Join(out, "*.py"))
	if err != nil || len(fresh) == 0 {
		t.Fatalf("generate.sh wrote nothing: %v", err)
	}
	for _, f := range fresh {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join("skillhost_pyecho", "gen", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("skillhost_pyecho/gen/%s is stale; run examples/plugin-python/generate.sh", filepath.Base(f))
		}
	}
}
