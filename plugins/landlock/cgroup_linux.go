package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// runCgroup creates a cgroup for one run under root with a pids limit and
// returns it with a function that removes it once the run's processes are
// gone. Used when scripts run as root, where RLIMIT_NPROC does not apply.
func runCgroup(root, runID string, pids int64) (string, func(), error) {
	parent := filepath.Join(root, "skillhost")
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", nil, err
	}
	if _, err := os.Stat(filepath.Join(parent, "cgroup.subtree_control")); err == nil {
		// cgroup v2: children get a pids.max only if the parent delegates it.
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
			return "", nil, fmt.Errorf("enable pids controller: %w", err)
		}
	}
	dir, err := os.MkdirTemp(parent, "run-"+sanitize(runID)+"-")
	if err != nil {
		return "", nil, err
	}
	remove := func() {
		// The supervisor has killed and reaped everything; the kernel may
		// take a moment to notice.
		for i := 0; i < 50; i++ {
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if pids > 0 {
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(pids, 10)), 0); err != nil {
			remove()
			return "", nil, fmt.Errorf("set pids.max: %w", err)
		}
	}
	return dir, remove, nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return -1
	}, strings.ToLower(s))
}
