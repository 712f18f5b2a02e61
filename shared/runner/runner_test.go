package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// testOptions are confiners the package's tests add to the runner of Run.
var testOptions []Option

func TestMain(m *testing.M) {
	// The package-level Run and Execute of the tests offer the tests'
	// confiners; New dispatches their helpers, which are this binary.
	std = New(append([]Option{
		WithConfiner("test-nofile", Confinement{Confine: func(payload []byte, _ Isolation) error {
			n, err := strconv.Atoi(string(payload))
			if err != nil {
				return err
			}
			return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: uint64(n), Max: uint64(n)})
		}}),
		WithConfiner("test-fail", Confinement{Confine: func([]byte, Isolation) error { return errors.New("refusing on purpose") }}),
	}, testOptions...)...)
	// The race runtime sleeps a second at exit; the supervisor inherits this.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	if os.Getenv("RUNNER_TEST_ORPHAN") != "" {
		orphanHelper()
		return
	}
	os.Exit(m.Run())
}

// modes runs f once with supervision (where the platform has it) and once
// without, so both code paths keep the same semantics.
func modes(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	was := Supervised()
	t.Cleanup(func() { supervised.Store(was) })
	if was {
		t.Run("supervised", func(t *testing.T) { supervised.Store(true); f(t) })
	}
	t.Run("direct", func(t *testing.T) { supervised.Store(false); f(t) })
}

func bash(script string) []string { return []string{"bash", "-c", script} }

func run(t *testing.T, spec Spec) (shared.Result, string) {
	t.Helper()
	return runUntil(t, spec, "")
}

// runUntil is run, cancelling the run once its output contains marker
// (never, for "").
func runUntil(t *testing.T, spec Spec, marker string) (shared.Result, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var out strings.Builder
	res, err := Run(ctx, spec, func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		out.Write(b)
		if marker != "" && strings.Contains(out.String(), marker) {
			cancel()
		}
	})
	if err != nil {
		t.Fatalf("Run(%q): %v", spec.Argv, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return res, out.String()
}

func TestRunOutcomes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name       string
		spec       Spec
		wantOut    string
		wantCode   int
		wantSignal string
	}{
		{name: "success", spec: Spec{Argv: bash("echo hello")}, wantOut: "hello\n"},
		{name: "exit code", spec: Spec{Argv: bash("echo oops; exit 3")}, wantOut: "oops\n", wantCode: 3},
		{name: "signal", spec: Spec{Argv: bash("echo bye; kill -KILL $$")}, wantOut: "bye\n", wantCode: -1, wantSignal: "SIGKILL"},
		{name: "merged in arrival order", spec: Spec{Argv: bash("echo a; echo b >&2; echo c")}, wantOut: "a\nb\nc\n"},
		{name: "env is exactly the spec", spec: Spec{Argv: bash("echo \"$FOO|${HOME:-unset}\""), Env: []string{"FOO=bar"}}, wantOut: "bar|unset\n"},
		{name: "stdin is empty", spec: Spec{Argv: bash("cat; echo done")}, wantOut: "done\n"},
		{name: "working directory", spec: Spec{Argv: bash("pwd"), Dir: dir}, wantOut: dir + "\n"},
	}
	modes(t, func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res, out := run(t, tt.spec)
				if out != tt.wantOut {
					t.Errorf("output = %q, want %q", out, tt.wantOut)
				}
				if res.ExitCode != tt.wantCode || res.Signal != tt.wantSignal {
					t.Errorf("exit = %d %q, want %d %q", res.ExitCode, res.Signal, tt.wantCode, tt.wantSignal)
				}
				if res.TimedOut || res.Truncated || len(res.NotEnforced) > 0 {
					t.Errorf("unexpected flags: %+v", res)
				}
			})
		}
	})
}

func TestHostEnvironmentDoesNotLeak(t *testing.T) {
	t.Setenv("SKILLHOST_TEST_SECRET", "hunter2")
	modes(t, func(t *testing.T) {
		_, out := run(t, Spec{Argv: []string{"/usr/bin/env"}, Env: []string{"A=1"}})
		if strings.Contains(out, "hunter2") || strings.TrimSpace(out) != "A=1" {
			t.Fatalf("env = %q, want only A=1", out)
		}
	})
}

func TestTimeout(t *testing.T) {
	tests := []struct {
		name        string
		script      string
		wantPartial string
	}{
		{name: "sleeps", script: "echo partial; sleep 30", wantPartial: "partial\n"},
		{name: "closes output and sleeps", script: "echo before; exec >/dev/null 2>&1; sleep 30", wantPartial: "before\n"},
		{name: "ignores SIGTERM", script: "trap '' TERM; echo stubborn; sleep 30; sleep 30", wantPartial: "stubborn\n"},
		{name: "background child holds the pipe", script: "sleep 30 & echo bg; wait", wantPartial: "bg\n"},
	}
	modes(t, func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				// A busy machine may not even start bash within a short
				// deadline, so a run whose script had not yet printed is
				// tried again with a longer one: the point is what happens
				// at the deadline, not how soon it comes.
				var res shared.Result
				var out string
				var el time.Duration
				timeout := 300 * time.Millisecond
				for try := 0; ; try++ {
					start := time.Now()
					res, out = run(t, Spec{Argv: bash(tt.script), Timeout: timeout, KillGrace: 300 * time.Millisecond})
					el = time.Since(start) - timeout
					if out == tt.wantPartial || try == 3 {
						break
					}
					t.Logf("try %d: output %q after a %v deadline; trying a longer one", try, out, timeout)
					timeout *= 4
				}
				if !res.TimedOut {
					t.Fatalf("TimedOut = false: %+v", res)
				}
				if out != tt.wantPartial {
					t.Errorf("partial output = %q, want %q", out, tt.wantPartial)
				}
				// Grace + backstop, with generous slack for a loaded CI
				// machine; the point is "seconds, not 30 s".
				if el > 15*time.Second {
					t.Errorf("took %v past the deadline, so it was not enforced", el)
				}
				if res.Signal == "" {
					t.Errorf("a timed-out command must report the killing signal: %+v", res)
				}
			})
		}
	})
}

func TestOutputLimit(t *testing.T) {
	modes(t, func(t *testing.T) {
		res, out := run(t, Spec{Argv: bash("head -c 3000000 /dev/zero | tr '\\0' x; echo tail"), OutputLimit: 1000})
		if !res.Truncated {
			t.Fatal("Truncated = false")
		}
		want := strings.Repeat("x", 1000) + TruncationMarker(1000)
		if out != want {
			t.Fatalf("output has %d bytes, want the first 1000 and one marker", len(out))
		}
		if res.ExitCode != 0 {
			t.Errorf("a truncated command still runs to completion; exit = %d", res.ExitCode)
		}
	})
}

func TestUnlimitedOutput(t *testing.T) {
	res, out := run(t, Spec{Argv: bash("head -c 2000000 /dev/zero"), OutputLimit: -1})
	if res.Truncated || len(out) != 2000000 {
		t.Fatalf("got %d bytes, truncated=%v", len(out), res.Truncated)
	}
}

func TestCancel(t *testing.T) {
	modes(t, func(t *testing.T) {
		// Cancelled once the command runs: a cancel during set-up is a
		// killed run, not the command's SIGTERM.
		res, _ := runUntil(t, Spec{Argv: bash("echo started; sleep 30"), KillGrace: 200 * time.Millisecond}, "started\n")
		// Canceled, not timed out: SIGTERM ended the command long
		// before its 30 seconds.
		if res.TimedOut || res.Signal != "SIGTERM" || res.Duration > 20*time.Second {
			t.Fatalf("want a SIGTERM from the cancel, no timeout: %+v", res)
		}
	})
}

func TestSetupErrors(t *testing.T) {
	modes(t, func(t *testing.T) {
		for _, argv := range [][]string{{"/nonexistent/prog"}, {"no-such-program-xyz"}, {}} {
			_, err := Run(context.Background(), Spec{Argv: argv}, nil)
			if !errors.Is(err, ErrSetup) {
				t.Errorf("Run(%q) error = %v, want ErrSetup", argv, err)
			}
		}
	})
}

// orphanHelper runs a long command through Run and never returns; the test
// kills it with SIGKILL to check that the command dies with it.
func orphanHelper() {
	pidfile := os.Getenv("RUNNER_TEST_ORPHAN")
	_, err := Run(context.Background(), Spec{
		Argv: bash("setsid sleep 60 & echo $! >> " + pidfile + "; sleep 60 & echo $! >> " + pidfile + "; echo ready; wait"),
		Env:  []string{"PATH=" + os.Getenv("PATH")},
	}, func(b []byte) { os.Stdout.Write(b) })
	fmt.Fprintln(os.Stderr, "orphan helper: Run returned:", err)
	os.Exit(1)
}

func TestCappedOutputBoundaries(t *testing.T) {
	tests := []struct {
		chunks    []string
		limit     int64
		want      string
		truncated bool
	}{
		{[]string{"abc", "def"}, 6, "abcdef", false},
		{[]string{"abc", "def", "g"}, 6, "abcdef" + TruncationMarker(6), true}, // a chunk ends exactly at the limit
		{[]string{"abcdefgh"}, 6, "abcdef" + TruncationMarker(6), true},
		{[]string{"abc", "defgh", "ij"}, 4, "abcd" + TruncationMarker(4), true},
		{[]string{"abc"}, -1, "abc", false},
	}
	for _, tt := range tests {
		var out strings.Builder
		c := newCappedOutput(tt.limit, func(b []byte) { out.Write(b) })
		for _, ch := range tt.chunks {
			c.write([]byte(ch))
		}
		if out.String() != tt.want || c.truncated != tt.truncated {
			t.Errorf("chunks %q limit %d: got %q truncated=%v", tt.chunks, tt.limit, out.String(), c.truncated)
		}
	}
}
