package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared/runner"
)

// Scripts that run as root escape RLIMIT_NPROC, and RLIMIT_DATA does not
// count shared mappings, so for root the process and memory limits are
// cgroups: one per run and controller, nested under the plugin's own cgroup
// so its parents' limits still apply. Moving a process into a cgroup waits
// for an RCU grace period (milliseconds on an idle machine), so the confine
// helper joins its cgroups while it waits for a command (the runner's
// Preparer); the confiner then only writes the limits.

func init() { runner.RegisterPreparer(confinerName, prepareCgroups) }

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
			if c, ok := usable(filepath.Join("/sys/fs/cgroup", name, parts[2]), name, limit); ok {
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

func usable(dir, name, limit string) (controller, bool) {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil || unix.Access(dir, unix.W_OK) != nil {
		return controller{}, false
	}
	return controller{name: name, base: filepath.Join(dir, runsDir), limitFile: limit}, true
}

// joined maps a controller name to this helper's prepared cgroup.
var (
	joined  = map[string]string{}
	joinErr error
)

// prepareCgroups creates and joins <base>/run-<pid> for every controller.
func prepareCgroups() {
	for _, c := range controllers() {
		if err := os.Mkdir(c.base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			joinErr = err
			continue
		}
		if _, err := os.Stat(filepath.Join(c.base, "cgroup.subtree_control")); err == nil {
			// cgroup v2: children get a controller only if the parent
			// delegates it.
			if err := os.WriteFile(filepath.Join(c.base, "cgroup.subtree_control"), []byte("+"+c.name), 0); err != nil {
				joinErr = fmt.Errorf("enable the %s controller: %w", c.name, err)
				continue
			}
		}
		dir := filepath.Join(c.base, "run-"+strconv.Itoa(os.Getpid()))
		if err := joinCgroup(dir, os.Getpid()); err != nil {
			joinErr = err
			continue
		}
		joined[c.name] = dir
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

// limitCgroups writes the process and memory limits into the helper's
// cgroups, preparing them now if that did not happen ahead of time.
func limitCgroups(l Limits) error {
	if len(joined) == 0 {
		prepareCgroups()
	}
	for _, c := range controllers() {
		v := map[string]int64{"pids": l.Processes, "memory": l.Memory}[c.name]
		if v <= 0 {
			continue
		}
		dir, ok := joined[c.name]
		if !ok {
			return fmt.Errorf("%s limit: %v", c.name, joinErr)
		}
		if err := os.WriteFile(filepath.Join(dir, c.limitFile), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
			return fmt.Errorf("%s limit: %w", c.name, err)
		}
	}
	return nil
}

// sweepCgroups removes the per-run cgroups whose owner, the process named
// in run-<pid>, is gone. A cgroup whose owner lives is never touched: it may
// be between its creation and its owner's join, when it is empty but about
// to be used, and runs of other skillhost processes sweep the same
// directory. Cgroups still holding processes refuse removal and stay.
func sweepCgroups() {
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

// ownerGone reports whether name is run-<pid> and no process <pid> exists.
func ownerGone(name string) bool {
	rest, ok := strings.CutPrefix(name, "run-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(rest)
	if err != nil || pid <= 0 {
		return false
	}
	return unix.Kill(pid, 0) == unix.ESRCH
}

// cgroupNames lists the controllers in use, for the probe.
func cgroupNames() []string {
	var names []string
	for _, c := range controllers() {
		names = append(names, c.name+" ("+filepath.Dir(c.base)+")")
	}
	return names
}
