package seatbelt

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

func TestMain(m *testing.M) {
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

// fakeSandboxExec stands in for /usr/bin/sandbox-exec off macOS: it records
// its argv and the profile file (content and mode), then runs the command
// after the options, unconfined.
func fakeSandboxExec(t *testing.T) (path, record string) {
	dir := t.TempDir()
	record = filepath.Join(dir, "record")
	path = filepath.Join(dir, "sandbox-exec")
	script := `#!/bin/bash
[ "$1" = -p ] && exit 0
printf '%s\0' "$@" > ` + record + `.argv
stat -c %a "$2" > ` + record + `.mode
cp "$2" ` + record + `.sb
shift 2
while [ "$1" = -D ]; do shift 2; done
exec "$@"
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, record
}

func execute(e *Executor, req shared.Request) (string, shared.Result, error) {
	var out bytes.Buffer
	res, err := e.Execute(context.Background(), req, func(b []byte) error { out.Write(b); return nil })
	return out.String(), res, err
}

func TestExecuteArgvProfileAndCleanup(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip(err)
	}
	fake, record := fakeSandboxExec(t)
	e := &Executor{sandboxExec: fake, goos: "darwin"}
	work := t.TempDir()
	req := shared.Request{
		RunID: "run-7", Argv: []string{"/bin/sh", "-c", "echo confined; echo $TMPDIR"}, Dir: work, SkillDir: work,
		Env:         []string{"PATH=/usr/bin:/bin"},
		Grant:       shared.Grant{FSRead: []string{work}, FSWrite: []string{filepath.Join(work, "out")}, Timeout: 10 * time.Second},
		OutputLimit: 1 << 20,
	}
	out, res, err := execute(e, req)
	if err != nil || res.ExitCode != 0 || !strings.HasPrefix(out, "confined\n") {
		t.Fatalf("%v %+v %q", err, res, out)
	}
	tmp := strings.TrimSpace(strings.TrimPrefix(out, "confined\n"))

	data, _ := os.ReadFile(record + ".argv")
	argv := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	profilePath := argv[1]
	want := Command(fake, profilePath, Render(req, Env{RunID: req.RunID, TempDir: tmp, SocketDir: os.Getenv("PLUGIN_UNIX_SOCKET_DIR")}), req.Argv)
	if !reflect.DeepEqual(append([]string{fake}, argv...), want) {
		t.Errorf("sandbox-exec argv =\n%q\nwant\n%q", append([]string{fake}, argv...), want)
	}
	profile, _ := os.ReadFile(record + ".sb")
	if wantText := Render(req, Env{RunID: req.RunID, TempDir: tmp}).Text; string(profile) != wantText {
		t.Errorf("the profile file differs from Render's")
	}
	if mode, _ := os.ReadFile(record + ".mode"); strings.TrimSpace(string(mode)) != "600" {
		t.Errorf("profile file mode %s, want 600", mode)
	}
	for _, gone := range []string{profilePath, tmp} {
		if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s outlived the run: %v", gone, err)
		}
	}

	// The profile file goes also when the run times out or fails to start.
	req.Argv = []string{"/bin/sh", "-c", "sleep 30"}
	// Long enough for the fake to record the profile on a busy machine
	// (300 ms was not, under stress-ng): the timing is not the point.
	req.Grant.Timeout = 5 * time.Second
	req.KillGrace = 200 * time.Millisecond
	if _, res, err := execute(e, req); err != nil || !res.TimedOut {
		t.Fatalf("timeout run: %v %+v", err, res)
	}
	data, _ = os.ReadFile(record + ".argv")
	if p := strings.Split(string(data), "\x00")[1]; p == profilePath {
		t.Fatal("the timed-out run did not write a new profile")
	} else if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("profile %s outlived a timed-out run", p)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "skillhost-*.sb"))
	e.sandboxExec = filepath.Join(t.TempDir(), "missing")
	e.goos = "darwin"
	// A generous deadline: a busy machine must not turn the failed start
	// into a timeout.
	req.Grant.Timeout = 60 * time.Second
	if _, _, err := execute(e, req); err == nil {
		t.Fatal("a missing sandbox-exec must fail")
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "skillhost-*.sb"))
	if len(after) > len(before) {
		t.Errorf("a failed start left a profile behind: %q", after)
	}
}

func TestUnsupportedOffMacOS(t *testing.T) {
	e := &Executor{sandboxExec: SandboxExec, goos: "linux"}
	p, _ := e.Probe(context.Background())
	if p.Status != shared.Unsupported || p.Reason != "sandbox-exec requires macOS" {
		t.Fatalf("probe = %+v", p)
	}
	if _, _, err := execute(e, shared.Request{Argv: []string{"/bin/true"}}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v", err)
	}
	ex, err := e.Explain(context.Background(), shared.Request{SkillDir: "/s", Argv: []string{"/bin/true"}})
	if err != nil || ex.Format != "sbpl" || !strings.Contains(ex.Text, "(deny default") || ex.Argv[0] != SandboxExec {
		t.Fatalf("explain works everywhere: %v %+v", err, ex)
	}
}

// The tests below need macOS and run against the real sandbox-exec; they
// are skipped elsewhere.

func requireMacOS(t *testing.T) *Executor {
	if runtime.GOOS != "darwin" {
		t.Skip("needs macOS and /usr/bin/sandbox-exec")
	}
	e := New()
	if p, _ := e.Probe(context.Background()); p.Status != shared.Healthy {
		t.Skipf("sandbox-exec unusable: %s", p.Reason)
	}
	return e
}

func macRequest(t *testing.T, script string, write []string, network bool) shared.Request {
	skill := t.TempDir()
	return shared.Request{
		Argv: []string{"/bin/sh", "-c", script}, Dir: skill, SkillDir: skill,
		Env:   []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME")},
		Grant: shared.Grant{FSWrite: write, Network: network, Timeout: 20 * time.Second}, OutputLimit: 1 << 20,
	}
}

func TestMacWrites(t *testing.T) {
	e := requireMacOS(t)
	inside, outside := t.TempDir(), t.TempDir()
	_, res, err := execute(e, macRequest(t, "echo ok > "+inside+"/f", []string{inside}, false))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("write inside the grant: %v %+v", err, res)
	}
	_, res, err = execute(e, macRequest(t, "echo bad > "+outside+"/f", []string{inside}, false))
	if err != nil || res.ExitCode == 0 {
		t.Fatalf("write outside the grant succeeded: %v %+v", err, res)
	}
	if _, err := os.Stat(outside + "/f"); err == nil {
		t.Fatal("the file outside the grant exists")
	}
}

func TestMacHomeUnreadable(t *testing.T) {
	e := requireMacOS(t)
	out, res, err := execute(e, macRequest(t, `ls "$HOME"`, nil, false))
	if err != nil || res.ExitCode == 0 {
		t.Fatalf("$HOME was readable: %v %+v %q", err, res, out)
	}
}

func TestMacNetwork(t *testing.T) {
	e := requireMacOS(t)
	l, err := netListen()
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	script := "/usr/bin/nc -z -G 2 127.0.0.1 " + portOf(l)
	if _, res, _ := execute(e, macRequest(t, script, nil, false)); res.ExitCode == 0 {
		t.Error("connected with the network off")
	}
	if _, res, err := execute(e, macRequest(t, script, nil, true)); err != nil || res.ExitCode != 0 {
		t.Errorf("could not connect with the network on: %v %+v", err, res)
	}
}

func netListen() (net.Listener, error) { return net.Listen("tcp4", "127.0.0.1:0") }

func portOf(l net.Listener) string {
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}
