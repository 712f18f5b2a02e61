package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/procstat"
)

// Confiners that ask for isolation: the supervisor then is the init of its
// own PID namespace and confines the command itself.
func init() {
	for _, name := range []string{"test-iso", "test-iso-fallback"} {
		testOptions = append(testOptions, WithConfiner(name, Confinement{Isolate: true, Confine: func([]byte, Isolation) error {
			// Per thread: only the command's thread, and so the command,
			// gets it; the supervisor's main thread must not.
			return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		}}))
	}
	testOptions = append(testOptions, WithConfiner("test-iso-fail", Confinement{Isolate: true, Confine: func([]byte, Isolation) error { return errors.New("refusing on purpose") }}))
	testOptions = append(testOptions, WithConfiner("test-iso-prepared", Confinement{Isolate: true, Confine: func(payload []byte, _ Isolation) error {
		// The Preparer ran before the command could: its mark is there.
		if _, err := os.Stat(string(payload)); err != nil {
			return fmt.Errorf("not prepared: %w", err)
		}
		return nil
	}, Prepare: preparedTest}))
}

// preparedTest is the Preparer of test-iso-prepared.
func preparedTest(pid int) func() {
	prepared.mu.Lock()
	defer prepared.mu.Unlock()
	// exec(2) has replaced the supervisor's image before its
	// arguments are mapped, and /proc reads an empty command line in
	// that window, which a loaded machine widens: wait it out.
	var cmdline []byte
	for deadline := time.Now().Add(10 * time.Second); len(cmdline) == 0 && time.Now().Before(deadline); {
		if cmdline, _ = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); len(cmdline) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	prepared.cmdlines = append(prepared.cmdlines, strings.ReplaceAll(string(cmdline), "\x00", " "))
	_ = os.WriteFile(prepared.mark, nil, 0o600)
	return func() {
		prepared.mu.Lock()
		defer prepared.mu.Unlock()
		prepared.released = append(prepared.released, procstat.Alive(pid))
	}
}

// prepared records what the test-iso-prepared Preparer saw.
var prepared struct {
	mu       sync.Mutex
	mark     string
	cmdlines []string
	released []bool // whether the supervisor was still alive at release
}

// requireIsolation skips where the kernel or container refuses namespaces.
func requireIsolation(t *testing.T) {
	t.Helper()
	requireSupervision(t)
	res, _ := run(t, Spec{Argv: bash("true"), Confine: "test-iso"})
	if len(res.NotEnforced) > 0 {
		t.Skipf("no namespaces here: %s", res.NotEnforced)
	}
}

// survivors lists live processes whose command line contains marker.
func survivors(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err == nil && procstat.Alive(pid) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

func TestIsolatedSupervisorIsInit(t *testing.T) {
	requireIsolation(t)
	res, out := run(t, Spec{Argv: bash(`echo $PPID; grep NoNewPrivs /proc/self/status`), Confine: "test-iso"})
	if res.ExitCode != 0 || len(res.NotEnforced) > 0 {
		t.Fatalf("result %+v, output %q", res, out)
	}
	// The command is a child of its namespace's init, confined on the
	// thread it was forked from.
	if want := "1\nNoNewPrivs:\t1\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if _, err := Run(context.Background(), Spec{Argv: bash("echo should not run"), Confine: "test-iso-fail"}, nil); !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "refusing on purpose") {
		t.Errorf("failing confiner: err = %v", err)
	}
	if _, err := Run(context.Background(), Spec{Argv: []string{"/nonexistent"}, Confine: "test-iso"}, nil); !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "/nonexistent") {
		t.Errorf("exec failure after confine: err = %v", err)
	}
}

func TestIsolatedNothingSurvives(t *testing.T) {
	requireIsolation(t)
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
	}{
		{name: "setsid child after exit", script: "setsid sleep %s & sleep 0.1"},
		{name: "double-forked orphan", script: "( ( sleep %s & ) & ); sleep 0.1"},
		{name: "TERM-proof child at timeout", script: "setsid bash -c 'trap \"\" TERM; sleep %s; sleep 1' & trap '' TERM; sleep %[1]s", timeout: 300 * time.Millisecond},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A duration no other process on the machine sleeps for.
			marker := fmt.Sprintf("%d.%d%d", 300+i, os.Getpid(), time.Now().UnixNano()%1000)
			start := time.Now()
			res, _ := run(t, Spec{Argv: bash(fmt.Sprintf(tt.script, marker)), Confine: "test-iso",
				Timeout: tt.timeout, KillGrace: 200 * time.Millisecond})
			if len(res.NotEnforced) > 0 {
				t.Fatalf("not isolated: %+v", res)
			}
			if tt.timeout > 0 {
				if !res.TimedOut {
					t.Errorf("expected a timeout: %+v", res)
				}
				if d := time.Since(start); d > 30*time.Second {
					t.Errorf("a timed-out run took %v", d)
				}
			}
			// The namespace is gone once Run returns: no waiting here.
			if s := survivors(marker); len(s) > 0 {
				t.Errorf("survived the run: %q", s)
			}
		})
	}
}

// Where namespaces are refused (here: by the environment switch) the
// supervisor starts a confine helper without them, and says so.
func TestIsolationFallback(t *testing.T) {
	requireSupervision(t)
	t.Setenv(EnvNoNamespaces, "1")
	res, out := run(t, Spec{Argv: bash(`grep NoNewPrivs /proc/self/status; echo $PPID`), Confine: "test-iso-fallback"})
	if res.ExitCode != 0 || len(res.NotEnforced) != 1 || !strings.Contains(res.NotEnforced[0], "private PID and mount namespaces") || !strings.HasPrefix(out, "NoNewPrivs:\t1\n") || strings.HasSuffix(out, "\n1\n") {
		t.Fatalf("result %+v, output %q", res, out)
	}
}

// For an isolated confiner the Preparer runs in the caller, on the
// supervisor, before the command starts; what it returns runs once the
// supervisor is gone.
func TestIsolatedPreparer(t *testing.T) {
	requireIsolation(t)
	KeepSpares(false)
	defer KeepSpares(true)
	prepared.mu.Lock()
	prepared.mark = filepath.Join(t.TempDir(), "prepared")
	prepared.cmdlines, prepared.released = nil, nil
	prepared.mu.Unlock()
	res, out := run(t, Spec{Argv: bash("echo ran"), Confine: "test-iso-prepared", ConfinePayload: []byte(prepared.mark)})
	if res.ExitCode != 0 || out != "ran\n" {
		t.Fatalf("result %+v, output %q", res, out)
	}
	prepared.mu.Lock()
	defer prepared.mu.Unlock()
	if len(prepared.cmdlines) != 1 || !strings.Contains(prepared.cmdlines[0], superviseArg+" test-iso-prepared "+isoPID) {
		t.Errorf("prepared %q, want one isolated supervisor", prepared.cmdlines)
	}
	if len(prepared.released) != 1 || prepared.released[0] {
		t.Errorf("released %v, want once, after the supervisor ended", prepared.released)
	}
}

// Turning spares off stops the one waiting and releases what was prepared
// for it, so a plugin that exits leaves no run cgroup behind.
func TestDroppedSpareIsReleased(t *testing.T) {
	requireIsolation(t)
	KeepSpares(true)
	defer KeepSpares(true)
	prepared.mu.Lock()
	prepared.mark = filepath.Join(t.TempDir(), "prepared")
	prepared.cmdlines, prepared.released = nil, nil
	prepared.mu.Unlock()
	if res, _ := run(t, Spec{Argv: bash("true"), Confine: "test-iso-prepared", ConfinePayload: []byte(prepared.mark)}); res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !warmReady("test-iso-prepared") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !warmReady("test-iso-prepared") {
		t.Fatal("no spare was started")
	}
	KeepSpares(false)
	if warmReady("test-iso-prepared") {
		t.Error("the spare is still waiting")
	}
	prepared.mu.Lock()
	defer prepared.mu.Unlock()
	if len(prepared.cmdlines) != 2 || len(prepared.released) != 2 || prepared.released[0] || prepared.released[1] {
		t.Errorf("prepared %d supervisors, released %v; want 2, each once it was gone", len(prepared.cmdlines), prepared.released)
	}
}

// collectLeft sends back files beneath the named directories of /tmp, and
// nothing at its top, in other directories, or named by a path.
func TestCollectLeft(t *testing.T) {
	tmp := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	write("top.txt", "scratch at the top")
	write("kept/a.txt", "a")
	write("kept/deep/b.txt", "b")
	write("scratch/c.txt", "the run's own")
	write("other/d.txt", "d")
	if err := os.Symlink(filepath.Join(tmp, "other"), filepath.Join(tmp, "link")); err != nil {
		t.Fatal(err)
	}
	left := collectLeft(tmp, keepSet([]string{"kept", "other", "link", "missing", "..", "kept/deep", ""}))
	var got []string
	for _, f := range left {
		got = append(got, strings.TrimPrefix(f.Path, tmp)+"="+string(f.Data))
	}
	want := []string{"/kept/a.txt=a", "/kept/deep/b.txt=b", "/other/d.txt=d"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("collectLeft = %q, want %q", got, want)
	}
	if left[0].Mode != 0o640 {
		t.Errorf("mode = %o, want 640", left[0].Mode)
	}
}

// keepSet holds names, not paths or parts of names.
func TestKeepSet(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"", ".", "..", "a/b"}, ""},
		{[]string{"a", "", "..", "b/c", "dd"}, "/a/dd/"},
	} {
		if got := keepSet(c.names); got != c.want {
			t.Errorf("keepSet(%q) = %q, want %q", c.names, got, c.want)
		}
	}
	set := keepSet([]string{"kept", "other"})
	for name, in := range map[string]bool{"kept": true, "other": true, "ept": false, "kept/other": false, "": false} {
		if got := inKeepSet(set, name); got != in {
			t.Errorf("%q in %q: %v, want %v", name, set, got, in)
		}
	}
}
