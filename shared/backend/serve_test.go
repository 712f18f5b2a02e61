//go:build unix

package backend

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// debugged is a backend that records the logger its calls carry.
type debugged struct {
	mu     sync.Mutex
	logged bool
	closed bool
}

func (d *debugged) Info(context.Context) (shared.Info, error) {
	return shared.Info{Name: "dbg", ContractVersions: []int{shared.ContractVersion}, Enforces: shared.Enforcement{Timeout: true}}, nil
}

func (d *debugged) Probe(context.Context) (shared.Probe, error) {
	return shared.Probe{Status: shared.Healthy}, nil
}

func (d *debugged) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	LoggerFrom(ctx).Info("marker-from-the-call")
	return Run(ctx, SpecFor(req), emit)
}

func (d *debugged) Close() error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	return nil
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// In debug mode the plugin serves without a host and prints the variable
// with which a host attaches; the host's calls carry Serve's logger, and
// an interrupt ends the plugin, which closes its backend.
func TestDebugModeAttachesAHost(t *testing.T) {
	var printed, logs syncBuffer
	impl := &debugged{}
	logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})
	done := make(chan error, 1)
	go func() {
		done <- Serve(impl, WithDebug(), WithLogger(logger), func(c *serveConfig) { c.out = &printed })
	}()
	re := regexp.MustCompile(shared.EnvPluginReattach + `='([^']*)'`)
	var m []string
	for deadline := time.Now().Add(30 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m = re.FindStringSubmatch(printed.String())
	}
	if m == nil {
		t.Fatalf("debug mode printed no %s line: %q", shared.EnvPluginReattach, printed.String())
	}
	t.Setenv(shared.EnvPluginReattach, m[1])
	conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: "/nowhere/skillhost-sandbox-dbg"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := conn.Execute(context.Background(), shared.Request{Argv: []string{"/bin/echo", "attached"}, Grant: shared.Grant{Timeout: 30 * time.Second}},
		func(b []byte) error { out.Write(b); return nil })
	if err != nil || res.ExitCode != 0 || out.String() != "attached\n" {
		t.Fatalf("Execute through the attached host: %+v, %v, output %q", res, err, out.String())
	}
	if !strings.Contains(logs.String(), "marker-from-the-call") {
		t.Errorf("the call's logger is not Serve's: its log has %q", logs.String())
	}
	conn.Close() // leaves a plugin in debug mode running
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after SIGINT")
	}
	impl.mu.Lock()
	defer impl.mu.Unlock()
	if !impl.closed {
		t.Error("the backend's Close was not called")
	}
}

func TestOutputIsAWriter(t *testing.T) {
	var got []string
	w := Output(func(b []byte) error { got = append(got, string(b)); return nil })
	if _, err := io.WriteString(w, "one"); err != nil || strings.Join(got, "") != "one" {
		t.Errorf("Write: %v, emitted %q", err, got)
	}
	failing := Output(func([]byte) error { return io.ErrClosedPipe })
	if n, err := failing.Write([]byte("x")); n != 0 || err != io.ErrClosedPipe {
		t.Errorf("a failing emit: %d, %v", n, err)
	}
}
