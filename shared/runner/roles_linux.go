package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
)

// Private argv[1] values of the two roles that need nothing of the program
// and are dispatched while this package initialises, before main.
const (
	limitsArg     = "__skillhost-limits"
	statusInitArg = "__skillhost-status-init"
)

func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case limitsArg:
		os.Exit(limitsMain(os.Args[2:]))
	case statusInitArg:
		os.Exit(statusInitMain(os.Args[2:]))
	}
}

// limitsArgv is the argv that execs argv under l (limitsMain).
func limitsArgv(l shared.Limits, argv []string) []string {
	enc, _ := json.Marshal(l)
	return append([]string{selfExe, limitsArg, string(enc), "--"}, argv...)
}

// limitsMain sets the resource limits of args[0] on this process and execs
// args[2:] in its place: the short step between the supervisor's fork and
// the command's exec where limits can be set for the command alone.
func limitsMain(args []string) int {
	var l shared.Limits
	if len(args) < 3 || args[1] != "--" || json.Unmarshal([]byte(args[0]), &l) != nil {
		fmt.Fprintln(os.Stderr, "runner: limits: bad arguments")
		return 126
	}
	set := func(name string, res int, v int64) error {
		if v <= 0 {
			return nil
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: uint64(v), Max: uint64(v)}); err != nil {
			return fmt.Errorf("set the %s limit to %d: %w", name, v, err)
		}
		return nil
	}
	nproc := l.Processes
	if nproc > 0 {
		nproc += int64(processesOf(os.Getuid()))
	}
	err := errors.Join(set("open files", unix.RLIMIT_NOFILE, l.OpenFiles),
		set("file size", unix.RLIMIT_FSIZE, l.FileSize),
		set("memory", unix.RLIMIT_DATA, l.Memory),
		set("processes", unix.RLIMIT_NPROC, nproc))
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner: limits:", err)
		return 126
	}
	argv := args[2:]
	err = syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "runner: exec %s: %v\n", argv[0], err)
	return 127
}

// processesOf counts the processes (threads count too, as RLIMIT_NPROC
// does) of uid, so that a limit of N lets the command start N more.
func processesOf(uid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+e.Name(), &st) == nil && int(st.Uid) == uid {
			tasks, _ := os.ReadDir("/proc/" + e.Name() + "/task")
			n += max(len(tasks), 1)
		}
	}
	return n
}

// StatusInit is a tiny init that runs a command as its child and writes
// the child's status (exit code, signal, resource usage: see DecodeStatus)
// to descriptor FD when it ends, then exits with the same code (128+N for
// a signal). SIGTERM, SIGINT and SIGHUP are passed on to the child; the
// init itself lives on to report. A wrapper that loses its command's
// status (bubblewrap reports a signal death as exit 128+N) runs the command
// through this init, with the status channel's descriptor
// (Spec.StatusChannel, StatusFD) as FD.
type StatusInit struct {
	// Path is this binary as the sandbox sees it (bind it in: its path,
	// os.Executable, may be hidden there).
	Path string
	// FD is the status channel's descriptor.
	FD int
	// Dir, if set, is where the init changes directory before starting the
	// command, so that the wrapper need not (bubblewrap's --chdir also sets
	// PWD, which the request did not ask for).
	Dir string
	// Unset names variables the init removes from the command's
	// environment: those the wrapper adds (bubblewrap sets PWD).
	Unset []string
}

// Argv is the argv that runs cmd under the init.
func (s StatusInit) Argv(cmd []string) []string {
	argv := []string{s.Path, statusInitArg, strconv.Itoa(s.FD), s.Dir}
	for _, name := range s.Unset {
		argv = append(argv, "-u", name)
	}
	return append(append(argv, "--"), cmd...)
}

// statusInitMain is the status init (see StatusInit).
func statusInitMain(args []string) int {
	fd, err := strconv.Atoi(firstOr(args, ""))
	if err != nil || fd < 3 || len(args) < 4 {
		fmt.Fprintln(os.Stderr, "runner: status init: bad arguments")
		return 126
	}
	dir, rest := args[1], args[2:]
	for len(rest) >= 2 && rest[0] == "-u" {
		os.Unsetenv(rest[1])
		rest = rest[2:]
	}
	if len(rest) < 2 || rest[0] != "--" {
		fmt.Fprintln(os.Stderr, "runner: status init: bad arguments")
		return 126
	}
	syscall.CloseOnExec(fd)
	out := os.NewFile(uintptr(fd), "status")
	argv := rest[1:]
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return report(out, CommandStatus{ExitCode: 126})
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", argv[0], err)
		return report(out, CommandStatus{ExitCode: 127})
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	onlyStdio()
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec %s: %v\n", argv[0], err)
		return report(out, CommandStatus{ExitCode: 126})
	}
	go func() {
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		wpid, err := syscall.Wait4(pid, &ws, 0, &ru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || wpid != pid {
			return report(out, CommandStatus{ExitCode: -1})
		}
		s := statusOf(ws)
		return report(out, CommandStatus{ExitCode: s.ExitCode, Signal: s.Signal, Usage: usageOf(&ru)})
	}
}

// usageOf is what wait4(2) reported of a child and its waited-for
// descendants.
func usageOf(ru *syscall.Rusage) *Usage {
	return &Usage{
		UserTime:   time.Duration(ru.Utime.Nano()),
		SystemTime: time.Duration(ru.Stime.Nano()),
		MaxRSS:     ru.Maxrss * 1024, // KiB on Linux
	}
}

// report writes st to out and returns the exit code that stands for it.
func report(out *os.File, st CommandStatus) int {
	_ = json.NewEncoder(out).Encode(st)
	out.Close()
	if st.Signal != "" {
		if sig := signalNumber(st.Signal); sig > 0 {
			return 128 + sig
		}
		return 128 + int(syscall.SIGKILL)
	}
	return st.ExitCode
}

func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}

// signalNumber is the number of the signal SignalName calls name, or 0.
func signalNumber(name string) int {
	for n := 1; n < 65; n++ {
		if SignalName(syscall.Signal(n)) == name {
			return n
		}
	}
	return 0
}
