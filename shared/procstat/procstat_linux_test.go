package procstat

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	st, err := parse([]byte("42 (a) b) c) S 7 42 42 0 -1 4194560 1 0 0 0 150 25 3 2 20 0 1 0 100 0 0\n"))
	if err != nil || st.PPid != 7 || st.State != 'S' || st.CPU != 1800*1e6 {
		t.Errorf("parse = %+v, %v", st, err)
	}
	for _, bad := range []string{"", "42 (x", "42 (x) ", "42 (x) S notanumber"} {
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
