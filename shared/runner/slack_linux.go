package runner

import (
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// A supervisor is a short Go process, and Go's monitor thread (sysmon)
// wakes every 20 µs for the first millisecond of any stretch in which the
// process is not wholly idle, then backs off: some 35 wake-ups for a
// supervisor's few milliseconds, each a sleep, a timer and two context
// switches. The runner therefore starts a supervisor with a coarser timer
// slack, which the kernel copies from the forking thread and keeps across
// exec, so the supervisor's monitor thread sleeps at least that long. The
// command must not inherit it: the supervisor puts the runner's own slack
// (envTimerSlack) back on each thread it starts the command, or the step
// before it, from.
const supervisorSlack = 1_000_000 // ns

// envTimerSlack carries the runner's timer slack, in nanoseconds, to the
// supervisor; it is in no other process's environment.
const envTimerSlack = "SKILLHOST_RUNNER_TIMER_SLACK"

// withSupervisorSlack runs start, which forks, on a thread whose timer
// slack is supervisorSlack, and passes it the environment entry that gives
// the supervisor the slack to restore ("" when the slack is left as it
// was).
func withSupervisorSlack(start func(env string) error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || old >= supervisorSlack || unix.Prctl(unix.PR_SET_TIMERSLACK, supervisorSlack, 0, 0, 0) != nil {
		return start("")
	}
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
	return start(envTimerSlack + "=" + strconv.Itoa(old))
}

// commandSlack is the slack the supervisor's command starts with: the
// runner's, or 0 to leave the forking thread's as it is.
var commandSlack uintptr

// readCommandSlack takes the runner's slack from the environment, once,
// as the supervisor starts.
func readCommandSlack() {
	if v, err := strconv.ParseUint(os.Getenv(envTimerSlack), 10, 63); err == nil && v > 0 {
		commandSlack = uintptr(v)
	}
}

// restoreSlack gives the calling (locked) thread the runner's timer slack,
// for what it forks next.
func restoreSlack() {
	if commandSlack != 0 {
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, commandSlack, 0, 0, 0)
	}
}

// forkWithSlack runs fork on a thread with the runner's timer slack.
func forkWithSlack(fork func() (int, error)) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	restoreSlack()
	return fork()
}
