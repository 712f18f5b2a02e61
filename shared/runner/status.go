package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// CommandStatus is how a command ended, as a status channel reports it
// (see [Spec.StatusChannel]): a wrapper that forks, or an init it runs
// inside its sandbox, knows the command's own status where the runner sees
// only the wrapper's.
type CommandStatus struct {
	// ExitCode is the exit status, or -1 when a signal killed the command.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that killed the command ("SIGTERM"), if any.
	Signal string `json:"signal,omitempty"`
	// Usage is what the command and its reaped descendants used, if known.
	Usage *Usage `json:"usage,omitempty"`
}

// Usage is the resources a command used, as getrusage(2) counts them for
// the process and the children it waited for.
type Usage struct {
	UserTime   time.Duration `json:"user_ns"`
	SystemTime time.Duration `json:"system_ns"`
	// MaxRSS is the largest resident set, in bytes.
	MaxRSS int64 `json:"max_rss_bytes"`
}

// DecodeStatus reads the status the runner's own status init writes (see
// [StatusInit]): one JSON CommandStatus a line; the last complete line
// counts. ok is false when data holds none.
func DecodeStatus(data []byte) (st CommandStatus, ok bool) {
	for _, line := range bytes.Split(data, []byte("\n")) {
		var s struct {
			CommandStatus
			ExitCode *int `json:"exit_code"`
		}
		if json.Unmarshal(line, &s) != nil || s.ExitCode == nil {
			continue
		}
		s.CommandStatus.ExitCode = *s.ExitCode
		st, ok = s.CommandStatus, true
	}
	return st, ok
}

// maxStatusBytes bounds what Run reads from a status channel.
const maxStatusBytes = 64 << 10

// StatusFD is the descriptor number the command receives the status
// channel's write end on: the one after spec's ExtraFiles.
func StatusFD(spec Spec) int { return 3 + len(spec.ExtraFiles) }

// limitsError names the limits of spec that Run cannot apply, or is nil.
// A confined spec's limits are its confiner's to apply.
func limitsError(spec Spec) error {
	if spec.Confine != "" {
		return nil
	}
	if _, cannot := SplitLimits(spec.Limits); len(cannot) > 0 {
		return shared.Refused(shared.ReasonUnsupported, fmt.Errorf("%w: %w: %s", ErrSetup, ErrLimits, strings.Join(cannot, "; ")))
	}
	return nil
}

// SplitLimits parts l into the limits Run can apply to a command it starts
// itself, here, and a description of each one it cannot, naming it. A
// backend that runs in best effort sets Spec.Limits to the first and lists
// the second in Result.NotEnforced; otherwise Run refuses a Spec with any
// of them.
func SplitLimits(l shared.Limits) (applicable shared.Limits, cannot []string) {
	if l == (shared.Limits{}) {
		return l, nil
	}
	if !Supervised() {
		for _, n := range limitNames(l) {
			cannot = append(cannot, n+" (resource limits need the supervised runner, on Linux)")
		}
		return shared.Limits{}, cannot
	}
	if l.Processes > 0 && os.Geteuid() == 0 {
		cannot = append(cannot, "processes (root is not bound by RLIMIT_NPROC; run the plugin as another user, or confine with a pids cgroup)")
		l.Processes = 0
	}
	return l, cannot
}

// ErrLimits is wrapped by the error Run returns when it cannot apply a
// resource limit of [Spec.Limits]; the message names each one.
var ErrLimits = fmt.Errorf("cannot apply resource limits")

func limitNames(l shared.Limits) []string {
	var out []string
	for _, x := range []struct {
		name string
		v    int64
	}{{"open_files", l.OpenFiles}, {"file_size", l.FileSize}, {"processes", l.Processes}, {"memory", l.Memory}} {
		if x.v > 0 {
			out = append(out, x.name)
		}
	}
	return out
}
