package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared/procstat"
)

// childrenOf lists the live processes whose parent is pid.
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, p := range stats {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if st, err := procstat.Read(n); err == nil && !st.Gone() && st.PPid == pid {
			out = append(out, n)
		}
	}
	return out
}

// TestOneShotStartsNoSpare checks that a one-shot host's plugin keeps no
// supervisor started for a next call, while a long-lived host's plugin (the
// control) does, and that neither plugin's environment holds its TLS key.
func TestOneShotStartsNoSpare(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	// The control goes first and times how long its spare takes to
	// appear; the one-shot plugin gets several times that to show one.
	var spareAfter time.Duration
	for _, oneShot := range []bool{false, true} {
		t.Run(fmt.Sprintf("OneShot=%v", oneShot), func(t *testing.T) {
			m := manager(t, func(o *Options) { o.OneShot = oneShot })
			if _, _, err := execute(context.Background(), m.Executor(Null), request("true")); err != nil {
				t.Fatal(err)
			}
			returned := time.Now()
			pid := m.Pid(Null)
			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				t.Skipf("cannot read the plugin's environment: %v", err)
			}
			if strings.Contains(string(environ), "PRIVATE KEY") {
				t.Error("the plugin's TLS key is in its environment")
			}
			if got := strings.Contains(string(environ), "SKILLHOST_ONE_SHOT=1"); got != oneShot {
				t.Errorf("SKILLHOST_ONE_SHOT=1 in the plugin's environment = %v", got)
			}
			if oneShot {
				time.Sleep(3*spareAfter + 200*time.Millisecond)
				if kids := childrenOf(pid); len(kids) != 0 {
					t.Errorf("one-shot plugin has children %v after its call", kids)
				}
				return
			}
			deadline := time.Now().Add(30 * time.Second)
			for len(childrenOf(pid)) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("control: no spare supervisor appeared in 30 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			spareAfter = time.Since(returned)
		})
	}
}
