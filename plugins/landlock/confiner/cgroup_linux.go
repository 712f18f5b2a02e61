package confiner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/runner"
)

// Scripts that run as root escape RLIMIT_NPROC, and RLIMIT_DATA does not
// count shared mappings, so for root the process and memory limits are
// cgroups: one per run and controller, nested under the plugin's own cgroup
// so its parents' limits still apply. Moving a process into a cgroup waits
// for an RCU grace period (milliseconds on an idle machine), so the
// process that will confine the script (the run's supervisor, init of the
// run's namespaces; or its confine helper where the kernel refused them) is
// moved into its cgroups as soon as it starts (the runner's Preparer),
// usually long before a command arrives; the confiner then only writes the
// limits, and the cgroups are removed once everything in them is gone.

// A controller is a cgroup controller the plugin can use.
type controller struct {
	name      string // "pids" or "memory"
	base      string // where per-run cgroups go
	limitFile string // pids.max, memory.max or memory.limit_in_bytes
}

// runsDir names the directory of per-run cgroups under the current cgroup.
const runsDir = "skillhost-runs"

// controllers lists the cgroup controllers this process may use: cgroup v1
// hierarchies for pids and memory, or the v2 hierarchy where the current
// cgroup's children get them. Only root gets any. It is worked out once per
// process, before a confine helper moves into its run cgroup (after which
// its own cgroup would name the wrong base).
var controllers = sync.OnceValue(findControllers)

func findControllers() []controller {
	if os.Geteuid() != 0 {
		return nil
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	var out []controller
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, name := range strings.Split(parts[1], ",") {
			if name != "pids" && name != "memory" {
				continue
			}
			limit := map[string]string{"pids": "pids.max", "memory": "memory.limit_in_bytes"}[name]
			if c, ok := usable(filepath.Join("/sys/fs/cgroup", name, outsideRuns(parts[2])), name, limit); ok {
				out = append(out, c)
			}
		}
		if parts[0] == "0" && parts[1] == "" && len(out) == 0 {
			// cgroup v2: the current cgroup holds processes, so children can
			// get controllers only at the top of a delegated hierarchy.
			if sub, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil {
				for _, name := range []string{"pids", "memory"} {
					if strings.Contains(string(sub), name) {
						if c, ok := usable("/sys/fs/cgroup", name, name+".max"); ok {
							out = append(out, c)
						}
					}
				}
			}
		}
	}
	return out
}

// outsideRuns is the cgroup a run cgroup was made in, or cg itself: a
// confine helper works out its controllers after the supervisor moved it.
func outsideRuns(cg string) string {
	if strings.HasPrefix(filepath.Base(cg), "run-") && filepath.Base(filepath.Dir(cg)) == runsDir {
		return filepath.Dir(filepath.Dir(cg))
	}
	return cg
}

func usable(dir, name, limit string) (controller, bool) {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil || unix.Access(dir, unix.W_OK) != nil {
		return controller{}, false
	}
	return controller{name: name, base: filepath.Join(dir, runsDir), limitFile: limit}, true
}

// prepareCgroups creates <base>/run-<pid> for every controller and moves
// the helper pid into it. It returns the function that removes them.
func prepareCgroups(pid int) func() {
	var dirs []string
	for _, c := range controllers() {
		if err := os.Mkdir(c.base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			continue // the confiner finds the helper outside a run cgroup and says so
		}
		if _, err := os.Stat(filepath.Join(c.base, "cgroup.subtree_control")); err == nil {
			// cgroup v2: children get a controller only if the parent
			// delegates it.
			if err := os.WriteFile(filepath.Join(c.base, "cgroup.subtree_control"), []byte("+"+c.name), 0); err != nil {
				continue
			}
		}
		dir := filepath.Join(c.base, "run-"+strconv.Itoa(pid))
		if err := joinCgroup(dir, pid); err != nil {
			continue
		}
		dirs = append(dirs, dir)
	}
	return func() {
		for _, d := range dirs {
			emptyCgroup(d)
			// The last processes may still be leaving the cgroup.
			for i := 0; i < 50 && os.Remove(d) != nil && !errors.Is(unix.Access(d, unix.F_OK), unix.ENOENT); i++ {
				time.Sleep(2 * time.Millisecond)
			}
		}
	}
}

// emptyCgroup kills every process left in a run cgroup. Normally the run's
// PID namespace has ended them all already; without one (a kernel that
// refuses namespaces) a setsid'd fork bomb may have outrun the supervisor's
// walk of /proc. A pids cgroup first stops all forking (pids.max 0), then
// its members are killed until none is left.
func emptyCgroup(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "pids.max"), []byte("0"), 0)
	for round := 0; round < 1000; round++ {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			return
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// joinCgroup creates dir and moves process pid into it. The sweep after
// any run (of this plugin or another) removes every empty run cgroup, this
// one included in the moment between its creation and the join, so a cgroup that vanishes (ENOENT, or
// ENODEV while it is being removed) is made again. Once joined it is not
// empty and no sweep can take it.
func joinCgroup(dir string, pid int) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		err = os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
		if err == nil || !(errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV)) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("join %s: %w", dir, err)
	}
	return nil
}

// limitCgroups writes the process and memory limits into the run cgroups
// the supervisor moved this helper into, found in /proc/self/cgroup.
func limitCgroups(l Limits) error {
	own := ownRunCgroups()
	for _, c := range controllers() {
		v := map[string]int64{"pids": l.Processes, "memory": l.Memory}[c.name]
		if v <= 0 {
			continue
		}
		dir, ok := own[c.name]
		if !ok {
			return fmt.Errorf("%s limit: the confine helper is not in a run cgroup under %s", c.name, c.base)
		}
		if err := os.WriteFile(filepath.Join(dir, c.limitFile), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
			return fmt.Errorf("%s limit: %w", c.name, err)
		}
	}
	return nil
}

// ownRunCgroups maps controller names to the run cgroup directories the
// calling process is in.
func ownRunCgroups() map[string]string {
	out := map[string]string{}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(filepath.Base(parts[2]), "run-") || filepath.Base(filepath.Dir(parts[2])) != runsDir {
			continue
		}
		for _, c := range controllers() {
			switch {
			case parts[1] == "" && filepath.Dir(c.base) == "/sys/fs/cgroup":
				out[c.name] = filepath.Join("/sys/fs/cgroup", parts[2])
			case parts[1] != "" && slices.Contains(strings.Split(parts[1], ","), c.name):
				out[c.name] = filepath.Join("/sys/fs/cgroup", c.name, parts[2])
			}
		}
	}
	return out
}

// SweepCgroups removes the per-run cgroups whose owner, the process named
// in run-<pid>, is gone. A cgroup whose owner lives is never touched: it may
// be between its creation and its owner's join, when it is empty but about
// to be used, and runs of other skillhost processes sweep the same
// directory. Cgroups still holding processes refuse removal and stay.
func SweepCgroups() {
	for _, c := range controllers() {
		entries, err := os.ReadDir(c.base)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() && ownerGone(e.Name()) {
				_ = os.Remove(filepath.Join(c.base, e.Name()))
			}
		}
	}
}

// ownerGone reports whether name is run-<pid> and process <pid> has ended
// (runner.Gone: an ended zombie counts, as it can no longer join anything).
func ownerGone(name string) bool {
	rest, ok := strings.CutPrefix(name, "run-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(rest)
	if err != nil || pid <= 0 {
		return false
	}
	return runner.Gone(pid)
}

// CgroupNames lists the controllers in use, for the probe.
func CgroupNames() []string {
	var names []string
	for _, c := range controllers() {
		names = append(names, c.name+" ("+filepath.Dir(c.base)+")")
	}
	return names
}
