package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skillhost/skillhost/shared/runner"
)

// Scripts that run as root escape RLIMIT_NPROC, so their process limit is a
// pids cgroup. Moving a process into a cgroup waits for an RCU grace period
// (milliseconds on an idle machine), so the confine helper joins a fresh
// cgroup of its own while it waits for a command (the runner's Preparer);
// the confiner then only writes the limit.

func init() { runner.RegisterPreparer(confinerName, prepareCgroup) }

// cgroupDir is the prepared cgroup of this confine helper, or "".
var (
	cgroupDir string
	cgroupErr error
)

// prepareCgroup creates and joins <root>/skillhost/run-<pid>.
func prepareCgroup() {
	if os.Geteuid() != 0 {
		return
	}
	root := cgroupRoot(true)
	if root == "" {
		cgroupErr = errors.New("no writable pids cgroup")
		return
	}
	parent := filepath.Join(root, "skillhost")
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		cgroupErr = err
		return
	}
	if _, err := os.Stat(filepath.Join(parent, "cgroup.subtree_control")); err == nil {
		// cgroup v2: children get a pids.max only if the parent delegates it.
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
			cgroupErr = fmt.Errorf("enable the pids controller: %w", err)
			return
		}
	}
	dir := filepath.Join(parent, "run-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		cgroupErr = err
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		cgroupErr = fmt.Errorf("join %s: %w", dir, err)
		return
	}
	cgroupDir, cgroupErr = dir, nil
}

// limitProcesses sets the pids limit of the helper's cgroup, preparing it
// now if that did not happen ahead of time.
func limitProcesses(n int64) error {
	if cgroupDir == "" {
		prepareCgroup()
	}
	if cgroupDir == "" {
		return fmt.Errorf("process limit: %w", cgroupErr)
	}
	if err := os.WriteFile(filepath.Join(cgroupDir, "pids.max"), []byte(strconv.FormatInt(n, 10)), 0); err != nil {
		return fmt.Errorf("process limit: %w", err)
	}
	return nil
}

// sweepCgroups removes the per-run cgroups under root whose processes are
// all gone; cgroups still in use refuse removal and stay.
func sweepCgroups(root string) {
	dir := filepath.Join(root, "skillhost")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "run-") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
