package sandbox

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

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/procstat"
	"github.com/skillhost/skillhost/shared/runner"
)

var binDir string

func TestMain(m *testing.M) {
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	if os.Getenv("SANDBOX_TEST_HOST") != "" {
		hostHelper()
		return
	}
	dir, err := testbin.Build("./cmd/skillhost-sandbox-null")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func manager(t *testing.T, mod func(*Options)) *Manager {
	t.Helper()
	opts := Options{Dirs: []string{binDir}, AutoMTLS: true, Env: []string{"PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}}
	if mod != nil {
		mod(&opts)
	}
	m := NewManager(opts)
	t.Cleanup(m.Close)
	return m
}

func request(script string) shared.Request {
	return shared.Request{
		Argv:        []string{"/bin/sh", "-c", script},
		Dir:         "/",
		Env:         []string{"PATH=/usr/bin:/bin"},
		Grant:       shared.Grant{Timeout: 30 * time.Second, Trust: shared.TrustExternal},
		OutputLimit: 1 << 20,
		KillGrace:   time.Second,
	}
}

func execute(ctx context.Context, ex shared.Executor, req shared.Request) (string, shared.Result, error) {
	var mu sync.Mutex
	var buf bytes.Buffer
	res, err := ex.Execute(ctx, req, func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		buf.Write(b)
		return nil
	})
	return buf.String(), res, err
}

func TestRoundTripAndStreamingOrder(t *testing.T) {
	for _, mtls := range []bool{true, false} {
		t.Run(fmt.Sprintf("AutoMTLS=%v", mtls), func(t *testing.T) {
			m := manager(t, func(o *Options) { o.AutoMTLS = mtls })
			out, res, err := execute(context.Background(), m.Executor(Null), request(`for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 4`))
			if err != nil {
				t.Fatal(err)
			}
			if out != "out1\nerr1\nout2\nerr2\nout3\nerr3\n" || res.ExitCode != 4 {
				t.Fatalf("got %q %+v", out, res)
			}
		})
	}
}

func TestLargeOutputThroughTheStream(t *testing.T) {
	m := manager(t, nil)
	req := request("head -c 10485760 /dev/zero")
	out, res, err := execute(context.Background(), m.Executor(Null), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(out) != 1<<20+len(runner.TruncationMarker(1<<20)) {
		t.Fatalf("10 MiB capped at 1 MiB: got %d bytes, truncated=%v", len(out), res.Truncated)
	}
	req.OutputLimit = 16 << 20
	out, res, err = execute(context.Background(), m.Executor(Null), req)
	if err != nil || res.Truncated || len(out) != 10<<20 {
		t.Fatalf("10 MiB uncapped: got %d bytes, truncated=%v, err %v", len(out), res.Truncated, err)
	}
}

func TestConcurrentCallsShareOneProcess(t *testing.T) {
	m := manager(t, nil)
	ex := m.Executor(Null)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, res, err := execute(context.Background(), ex, request(fmt.Sprintf("echo call-%d", i)))
			if err != nil || out != fmt.Sprintf("call-%d\n", i) || res.ExitCode != 0 {
				errs <- fmt.Errorf("call %d: %q %+v %v", i, out, res, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	pid := m.Pid(Null)
	if pid == 0 {
		t.Fatal("no plugin process")
	}
	if _, _, err := execute(context.Background(), ex, request("true")); err != nil || m.Pid(Null) != pid {
		t.Fatalf("the plugin process was not reused: %d -> %d (%v)", pid, m.Pid(Null), err)
	}
}

func TestPluginKilledMidCallThenRecovers(t *testing.T) {
	m := manager(t, nil)
	ex := m.Executor(Null)
	pidfile := filepath.Join(t.TempDir(), "pid")
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := ex.Execute(context.Background(), request("echo $$ > "+pidfile+"; echo started; sleep 60"), func([]byte) error {
			once.Do(func() { close(started) })
			return nil
		})
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the call never started")
	}
	first := m.Pid(Null)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not return after the plugin died")
	}
	if err == nil || !strings.HasPrefix(err.Error(), `sandbox plugin "null" crashed: `) {
		t.Fatalf("err = %v, want a crash report", err)
	}
	// The dead plugin's command goes with it: its supervisor lost its lifeline.
	data, _ := os.ReadFile(pidfile)
	script, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	waitGone(t, script)

	out, _, err := execute(context.Background(), ex, request("echo again"))
	if err != nil || out != "again\n" {
		t.Fatalf("after a crash the next call must start a fresh plugin: %q %v", out, err)
	}
	if second := m.Pid(Null); second == first || second == 0 {
		t.Fatalf("plugin pid %d -> %d", first, second)
	}
}

func TestChecksumPinning(t *testing.T) {
	path := filepath.Join(binDir, "skillhost-sandbox-null")
	sum, err := Sum(path)
	if err != nil {
		t.Fatal(err)
	}
	m := manager(t, func(o *Options) { o.Pins = map[string]string{Null: strings.ToUpper(sum)} })
	if _, _, err := execute(context.Background(), m.Executor(Null), request("true")); err != nil {
		t.Fatalf("a matching pin must launch: %v", err)
	}
	wrong := strings.Repeat("0", 64)
	m = manager(t, func(o *Options) { o.Pins = map[string]string{Null: wrong} })
	_, _, err = execute(context.Background(), m.Executor(Null), request("true"))
	var ce *ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a checksum error", err)
	}
	for _, want := range []string{path, "expected " + wrong, "actual " + sum} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestMissingPlugin(t *testing.T) {
	m := manager(t, nil)
	_, _, err := execute(context.Background(), m.Executor("landlock-typo"), request("true"))
	var nf *NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), binDir) || !strings.Contains(err.Error(), "sandbox.enabled: false") {
		t.Fatalf("err = %v", err)
	}
}

func TestNotAPlugin(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "skillhost-sandbox-fake")
	os.WriteFile(fake, []byte("#!/bin/sh\necho I am not a plugin\nsleep 1\n"), 0o755)
	m := manager(t, func(o *Options) { o.Dirs = []string{dir}; o.StartTimeout = 5 * time.Second })
	start := time.Now()
	_, _, err := execute(context.Background(), m.Executor("fake"), request("true"))
	if err == nil || !strings.Contains(err.Error(), `sandbox plugin "fake" at `+fake) {
		t.Fatalf("err = %v", err)
	}
	// Generous for a busy machine: the point is that a bad handshake fails
	// rather than hangs.
	if time.Since(start) > 30*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestPluginEnvironmentAndSocket(t *testing.T) {
	t.Setenv("SKILLHOST_TEST_SECRET", "hunter2")
	m := manager(t, nil)
	if _, _, err := execute(context.Background(), m.Executor(Null), request("true")); err != nil {
		t.Fatal(err)
	}
	pid := m.Pid(Null)
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Skipf("cannot read the plugin's environment: %v", err)
	}
	vars := strings.Split(string(environ), "\x00")
	var socketDir string
	for _, kv := range vars {
		if strings.Contains(kv, "hunter2") {
			t.Errorf("the host's environment leaked into the plugin: %q", kv)
		}
		if v, ok := strings.CutPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR="); ok {
			socketDir = v
		}
	}
	fi, err := os.Stat(socketDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory %q: %v %v", socketDir, fi.Mode(), err)
	}
	m.Close()
	if _, err := os.Stat(socketDir); !os.IsNotExist(err) {
		t.Errorf("the socket directory %s outlived the plugin: %v", socketDir, err)
	}
	waitGone(t, pid)
}

// hostHelper acts as a host that starts a plugin and a long command, then
// waits to be killed.
func hostHelper() {
	m := NewManager(Options{Dirs: []string{os.Getenv("SANDBOX_TEST_HOST")}, AutoMTLS: true, Env: []string{"PATH=" + os.Getenv("PATH")}})
	_, err := m.Executor(Null).Execute(context.Background(), request("echo script $$; sleep 120"), func(b []byte) error {
		fmt.Printf("plugin %d %s", m.Pid(Null), b)
		return nil
	})
	fmt.Fprintln(os.Stderr, "host helper: Execute returned:", err)
	os.Exit(1)
}

func TestHostSIGKILLLeavesNoPlugin(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_HOST="+binDir)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var plugin, script int
	if _, serr := fmt.Sscanf(line, "plugin %d script %d", &plugin, &script); err != nil || serr != nil || plugin == 0 {
		cmd.Process.Kill()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitGone(t, plugin)
	waitGone(t, script)
}

// waitGone waits until pid has ended: it no longer exists, or no thread of
// it is left.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Not the zombie state alone: during exit_group the first thread
		// turns zombie before the others have closed the process's files,
		// among them its end of the host's connection.
		if !procstat.Alive(pid) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
