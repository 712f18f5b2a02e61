package procstat

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParse(t *testing.T) {
	st, err := parse([]byte("42 (a) b) c) S 7 42 42 0 -1 4194560 1 0 0 0 150 25 3 2 20 0 3 0 100 0 0\n"))
	if err != nil || st.PPid != 7 || st.State != 'S' || st.CPU != 1800*1e6 || st.Threads != 3 {
		t.Errorf("parse = %+v, %v", st, err)
	}
	for _, bad := range []string{"", "42 (x", "42 (x) ", "42 (x) S notanumber",
		"42 (x) Z 7 42 42 0 -1 4194560 1 0 0 0 150 25 3 2 20 0 many 0 100 0 0"} {
		if _, err := parse([]byte(bad)); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}

// A zombie counts as gone, a reaped process too; this one is alive.
func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("the test itself is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	for Alive(pid) { // becomes a zombie: not waited for yet
		time.Sleep(time.Millisecond)
	}
	if st, err := Read(pid); err != nil || st.State != 'Z' {
		t.Errorf("unreaped child: %+v, %v; want a zombie", st, err)
	}
	cmd.Wait()
	if Alive(pid) {
		t.Error("a reaped process is alive")
	}
}

// TestFirstThreadEnded: a process whose first thread ended on its own,
// while another thread runs on, looks like a zombie but has not ended; once
// the last thread ends it has.
func TestFirstThreadEnded(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 to end a first thread on its own")
	}
	// The second thread runs until its stdin closes; the first calls the
	// exit system call (not exit_group), which ends only itself.
	cmd := exec.Command(python, "-c", `
import ctypes, sys, threading
threading.Thread(target=sys.stdin.read).start()
ctypes.CDLL(None).syscall(int(sys.argv[1]), 0)`, strconv.Itoa(unix.SYS_EXIT))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	pid := cmd.Process.Pid
	st := waitFor(t, pid, func(st Stat) bool { return st.State == 'Z' })
	if st.Gone() || !Alive(pid) || st.Threads != 2 {
		t.Errorf("first thread ended, second running: %+v, Gone %v, Alive %v; want two threads, not gone", st, st.Gone(), Alive(pid))
	}
	stdin.Close()
	waitFor(t, pid, Stat.Gone)
	if Alive(pid) {
		t.Error("both threads ended, and the process is still alive")
	}
}

// waitFor reads pid's stat until ok holds, for at most a minute.
func waitFor(t *testing.T, pid int, ok func(Stat) bool) Stat {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		st, err := Read(pid)
		if err != nil {
			t.Fatalf("read %d: %v", pid, err)
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d: %+v after a minute", pid, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
