package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyOfSelf writes a copy of this test binary, which dispatches the
// supervisor as a lean binary's SupervisorMain does, to dir.
func copyOfSelf(t *testing.T, dir string) string {
	t.Helper()
	src, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(dir, "lean-supervisor")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// supervisorOf runs a command under r that names the binary of its parent,
// the supervisor.
func supervisorOf(t *testing.T, r *Runner) string {
	t.Helper()
	var out strings.Builder
	res, err := r.Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", "readlink /proc/$PPID/exe"}}, func(b []byte) { out.Write(b) })
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v, %+v, output %q", err, res, out.String())
	}
	return strings.TrimSpace(out.String())
}

func TestWithSupervisorStartsThatBinary(t *testing.T) {
	dir := t.TempDir()
	lean := copyOfSelf(t, dir)
	f, err := os.Open(lean)
	if err != nil {
		t.Fatal(err)
	}
	r := New(WithoutSpares(), WithSupervisor(f))
	f.Close() // the runner keeps its own descriptor
	if got := supervisorOf(t, r); got != lean {
		t.Errorf("supervisor binary = %q, want the one given, %q", got, lean)
	}
	// Written to after it was opened (a pin checked then no longer holds),
	// it is not started again: this program supervises instead.
	f, err = os.OpenFile(lean, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got := supervisorOf(t, r); got != self {
		t.Errorf("after a write to it, supervisor binary = %q, want this program, %q", got, self)
	}
}

// TestWithSupervisorAmongHighDescriptors: when the child's descriptors
// are numbered around the runner's copy of the binary (so that arranging
// them could move one onto it), the runner starts a fresh copy above them.
func TestWithSupervisorAmongHighDescriptors(t *testing.T) {
	lean := copyOfSelf(t, t.TempDir())
	f, err := os.Open(lean)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := New(WithoutSpares(), WithSupervisor(f))
	if r.exe == nil {
		t.Fatal("WithSupervisor did not take the binary")
	}
	// Fill the numbers below the runner's copy, so that the run's pipes
	// are numbered around and above it.
	var held []*os.File
	defer func() {
		for _, h := range held {
			h.Close()
		}
	}()
	for len(held) < 200 {
		h, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, h)
		if int(h.Fd()) >= r.exe.fd-2 {
			break
		}
	}
	if got := supervisorOf(t, r); got != lean {
		t.Errorf("supervisor binary = %q, want %q", got, lean)
	}
}

func TestWithSupervisorFallsBack(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, content string
		mode          os.FileMode
	}{
		// Ignored from the start: nobody may execute it.
		{"not executable", "#!/bin/sh\n", 0o644},
		// Accepted, then fails to start (no format the kernel knows): the
		// runner starts this program instead, for this run and the next.
		{"not a program", "\x00\x01\x02 garbage", 0o755},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.WriteFile(path, []byte(c.content), c.mode); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r := New(WithoutSpares(), WithSupervisor(f))
			for range 2 {
				if got := supervisorOf(t, r); got != self {
					t.Errorf("supervisor binary = %q, want this program, %q", got, self)
				}
			}
		})
	}
}
