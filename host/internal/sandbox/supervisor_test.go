package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeanSupervisor: a plugin's runs are supervised by its lean
// supervisor binary when it has one beside it, and, once the plugin is
// pinned, only when that binary is pinned too and matches.
func TestLeanSupervisor(t *testing.T) {
	pluginBin := filepath.Join(binDir, "skillhost-sandbox-null")
	leanBin := filepath.Join(binDir, "skillhost-supervisor-null")
	both, err := Sums(Candidate{Name: Null, Path: pluginBin})
	if err != nil {
		t.Fatal(err)
	}
	if both[Null+SupervisorPin] == "" {
		t.Fatalf("Sums = %v: no pin for the supervisor binary beside the plugin", both)
	}
	pluginOnly := map[string]string{Null: both[Null]}
	wrong := map[string]string{Null: both[Null], Null + SupervisorPin: strings.Repeat("0", 64)}
	supOnly := map[string]string{Null + SupervisorPin: both[Null+SupervisorPin]}
	wrongSupOnly := map[string]string{Null + SupervisorPin: strings.Repeat("0", 64)}
	for _, oneShot := range []bool{false, true} {
		for _, c := range []struct {
			name string
			pins map[string]string
			want string
		}{
			{"unpinned", nil, leanBin},
			{"plugin pinned, supervisor not", pluginOnly, pluginBin},
			{"both pinned", both, leanBin},
			{"supervisor pinned alone", supOnly, leanBin},
		} {
			t.Run(fmt.Sprintf("%s/oneShot=%v", c.name, oneShot), func(t *testing.T) {
				m := manager(t, func(o *Options) { o.Pins, o.OneShot = c.pins, oneShot })
				out, res, err := execute(context.Background(), m.Executor(Null), request("readlink /proc/$PPID/exe"))
				if err != nil || res.ExitCode != 0 {
					t.Fatalf("run: %v %+v %q", err, res, out)
				}
				if got := strings.TrimSpace(out); got != c.want {
					t.Errorf("the run's supervisor is %s, want %s", got, c.want)
				}
			})
		}
		for name, pins := range map[string]map[string]string{"supervisor changed": wrong, "supervisor alone changed": wrongSupOnly} {
			t.Run(fmt.Sprintf("%s/oneShot=%v", name, oneShot), func(t *testing.T) {
				m := manager(t, func(o *Options) { o.Pins, o.OneShot = pins, oneShot })
				_, _, err := execute(context.Background(), m.Executor(Null), request("true"))
				var ce *ChecksumError
				if !errors.As(err, &ce) || ce.Name != Null+SupervisorPin || !strings.Contains(err.Error(), leanBin) {
					t.Fatalf("err = %v, want a checksum error naming the supervisor binary", err)
				}
			})
		}
	}
}
