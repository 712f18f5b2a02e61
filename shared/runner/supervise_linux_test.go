package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/procstat"
)

func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // nothing recorded
	}
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file: %v", err)
		}
		pids = append(pids, n)
	}
	return pids
}

func waitDead(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range pids {
		for procstat.Alive(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("pid %d survived the run", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func requireSupervision(t *testing.T) {
	if !Supervised() {
		t.Skip("supervision needs Linux")
	}
}

func TestNoDescendantSurvives(t *testing.T) {
	requireSupervision(t)
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
	}{
		{name: "background child after exit", script: "sleep 30 & echo $! > $PIDS"},
		{name: "setsid child after exit", script: "setsid bash -c 'echo $$ >> $PIDS; exec sleep 30' & sleep 0.2"},
		{name: "double-forked orphan", script: "( ( sleep 30 & echo $! >> $PIDS ) & ); sleep 0.2"},
		{name: "setsid child at timeout", script: "setsid bash -c 'trap \"\" TERM; echo $$ >> $PIDS; sleep 30; sleep 30' & sleep 30", timeout: 500 * time.Millisecond},
		{name: "many children at timeout", script: "for i in $(seq 100); do sleep 30 & echo $! >> $PIDS; done; wait", timeout: 800 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A deadline that falls before a busy machine let the script
			// record anything is tried again, longer: the point is what
			// survives the deadline, not how soon it comes.
			for try, timeout := 0, tt.timeout; ; try, timeout = try+1, 4*timeout {
				pidfile := filepath.Join(t.TempDir(), "pids")
				res, _ := run(t, Spec{Argv: bash(tt.script), Env: []string{"PIDS=" + pidfile, "PATH=" + os.Getenv("PATH")},
					Timeout: timeout, KillGrace: 200 * time.Millisecond})
				if tt.timeout > 0 && !res.TimedOut {
					t.Errorf("expected a timeout: %+v", res)
				}
				pids := readPids(t, pidfile)
				if len(pids) == 0 && tt.timeout > 0 && try < 3 {
					t.Logf("try %d: no pids recorded before a %v deadline; trying a longer one", try, timeout)
					continue
				}
				if len(pids) == 0 {
					t.Fatal("script recorded no pids")
				}
				waitDead(t, pids)
				return
			}
		})
	}
}

func TestConfiner(t *testing.T) {
	requireSupervision(t)
	res, out := run(t, Spec{Argv: bash("ulimit -n"), Confine: "test-nofile", ConfinePayload: []byte("42")})
	if res.ExitCode != 0 || out != "42\n" {
		t.Fatalf("confined run: %+v %q", res, out)
	}
	_, err := Run(context.Background(), Spec{Argv: bash("echo should not run"), Confine: "test-fail"}, nil)
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "refusing on purpose") {
		t.Fatalf("failing confiner: err = %v", err)
	}
	_, err = Run(context.Background(), Spec{Argv: bash("true"), Confine: "unknown"}, nil)
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), `"unknown"`) {
		t.Fatalf("unknown confiner: err = %v", err)
	}
	_, err = Run(context.Background(), Spec{Argv: []string{"/nonexistent"}, Confine: "test-nofile", ConfinePayload: []byte("64")}, nil)
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("exec failure after confine: err = %v", err)
	}
}

func TestConfinerNeedsSupervision(t *testing.T) {
	was := Supervised()
	supervised.Store(false)
	defer supervised.Store(was)
	_, err := Run(context.Background(), Spec{Argv: bash("true"), Confine: "test-nofile"}, nil)
	if !errors.Is(err, ErrSetup) {
		t.Fatalf("err = %v, want ErrSetup", err)
	}
}

func TestCallerKilledTakesTheTreeWithIt(t *testing.T) {
	requireSupervision(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RUNNER_TEST_ORPHAN="+pidfile)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := stdout.Read(buf)
	if !strings.Contains(string(buf[:n]), "ready") {
		_ = cmd.Process.Kill()
		t.Fatalf("helper did not start: %q", buf[:n])
	}
	_ = cmd.Process.Signal(unix.SIGKILL)
	_ = cmd.Wait()
	waitDead(t, readPids(t, pidfile))
}

// A status the runner cannot read (a supervisor binary of another build)
// is reported as such, not as a killed run; one cut short is the
// supervisor dying, which is.
func TestReadStatusOfAnotherBuild(t *testing.T) {
	var frame bytes.Buffer
	if err := (wireStatus{ExitCode: 7}).writeTo(&frame); err != nil {
		t.Fatal(err)
	}
	older := append([]byte(nil), frame.Bytes()...)
	older[4] = wireSpecVersion - 1
	for _, c := range []struct {
		name, data, want string
		killed           bool
	}{
		{"JSON of a version 3 supervisor", `{"exit_code":-1,"setup_error":"a spec of version 4"}` + "\n", "different builds", false},
		{"a frame of another version", string(older), "different builds", false},
		{"cut short", string(frame.Bytes()[:len(frame.Bytes())-1]), "", true},
		{"nothing", "", "", true},
		{"read", frame.String(), "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			go func() { w.WriteString(c.data); w.Close() }()
			p := &supervisedProcess{status: r, initFD: -1, final: make(chan wireStatus, 1)}
			p.readStatus()
			ws, ok := <-p.final
			switch {
			case c.killed && ok:
				t.Errorf("status %+v, want none (the supervisor died)", ws)
			case !c.killed && !ok:
				t.Error("no status")
			case c.want != "" && !strings.Contains(ws.SetupError, c.want):
				t.Errorf("SetupError %q, want it to say %q", ws.SetupError, c.want)
			case c.want == "" && ok && ws.ExitCode != 7:
				t.Errorf("status %+v, want exit 7", ws)
			}
		})
	}
}

// A status over the frame's bound goes without its left files.
func TestSendStatusOverTheBound(t *testing.T) {
	var buf bytes.Buffer
	sendStatus(&buf, wireStatus{ExitCode: 3, Left: []LeftFile{{Path: "/tmp/a/b", Data: make([]byte, maxWireStatus)}}})
	ws, err := readWireStatus(&buf)
	if err != nil || ws.ExitCode != 3 || len(ws.Left) != 0 {
		t.Fatalf("read %+v, %v; want exit 3 without left files", ws, err)
	}
}
