package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// superviseInit is the supervisor of a confiner that asked for isolation
// when the kernel gave it its namespaces: it is the init of its own PID
// namespace (and mount namespace, and user namespace unless root), so it
// confines and starts the command itself instead of re-executing this
// binary once more as a confine helper. A PID namespace holds everything
// the command starts, and its init's death kills all of it in the kernel,
// so this supervisor needs neither a subreaper nor walks of /proc (which,
// from inside, would name the host's processes): kill(-1) reaches exactly
// the namespace.
func superviseInit(lifeline, specF, statusF *os.File) int {
	report := func(st wireStatus) int {
		st.Isolated = true
		sendStatus(statusF, st)
		return 0
	}
	// Nothing the command does may read this process's memory or
	// descriptors through /proc.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		// The runner cut the lifeline or died: init's exit ends the
		// namespace; no status is written (see wait).
		_ = syscall.Kill(-1, syscall.SIGKILL)
		os.Exit(0)
	}()
	forwardTerm(&terminating)

	spec, err := readWireSpec(specF)
	specF.Close()
	if err != nil {
		return report(wireStatus{ExitCode: -1, SetupError: "supervisor: read spec: " + err.Error()})
	}
	if spec.Confine != os.Args[2] {
		return report(wireStatus{ExitCode: -1, SetupError: fmt.Sprintf("supervisor: started for confiner %q, asked for %q", os.Args[2], spec.Confine)})
	}
	fn := helperConfs[spec.Confine].Confine
	if fn == nil {
		return report(wireStatus{ExitCode: -1, SetupError: fmt.Sprintf("supervisor: no confiner named %q in this binary", spec.Confine)})
	}
	pid, err := forkConfined(fn, spec)
	if err != nil {
		reapNamespace(-1)
		if terminating.Load() {
			// The deadline (or the caller) ended the run while it was
			// being set up: a killed run, not a failure to start.
			return report(wireStatus{ExitCode: -1, Signal: "SIGKILL"})
		}
		return report(wireStatus{ExitCode: -1, SetupError: err.Error()})
	}
	st := reapNamespace(pid)
	var left []LeftFile
	if spec.KeepTmp != "" {
		// Every process of the run is gone: nothing can change /tmp now.
		left = collectLeft("/tmp", spec.KeepTmp)
	}
	return report(wireStatus{ExitCode: st.ExitCode, Signal: st.Signal, Left: left})
}

// collectLeft reads the regular files beneath the directories of tmp
// named in keep, a keepSet (not those at its top), without following
// symbolic links, up to MaxLeftFiles and MaxLeftBytes in all; a larger
// file is left out.
func collectLeft(tmp string, keep string) []LeftFile {
	var out []LeftFile
	var total int64
	var root unix.Stat_t
	if unix.Lstat(tmp, &root) != nil {
		return nil
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > 32 || len(out) >= MaxLeftFiles {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := dir + "/" + e.Name()
			switch {
			case e.IsDir():
				// A grant bound beneath /tmp is the host's, not the run's.
				var st unix.Stat_t
				if unix.Lstat(p, &st) == nil && st.Dev == root.Dev {
					walk(p, depth+1)
				}
			case e.Type().IsRegular() && depth > 0 && len(out) < MaxLeftFiles:
				fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
				if err != nil {
					continue
				}
				f := os.NewFile(uintptr(fd), p)
				var st unix.Stat_t
				if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || total+st.Size > MaxLeftBytes {
					f.Close()
					continue
				}
				data, err := io.ReadAll(io.LimitReader(f, st.Size))
				f.Close()
				if err == nil {
					out = append(out, LeftFile{Path: p, Mode: st.Mode & 0o777, Data: data})
					total += int64(len(data))
				}
			}
		}
	}
	// The run's /tmp is read once and matched against keep, not each name
	// of keep looked up: the host's /tmp may name hundreds of directories,
	// and the run's rarely more than a few.
	for _, d := range topDirs(tmp) {
		if !inKeepSet(keep, d) {
			continue
		}
		var st unix.Stat_t
		// A grant bound beneath /tmp is the host's, not the run's.
		if unix.Lstat(tmp+"/"+d, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Dev == root.Dev {
			walk(tmp+"/"+d, 1)
		}
	}
	return out
}

// keepSet joins the names of Spec.KeepTmp into one string, "/a/b/": a
// name is in it when "/"+name+"/" is, since no name holds a slash. Empty
// names, "." and "..", and anything with a slash (a path, not a name) are
// left out; with none left it is empty. inKeepSet looks a name up.
func keepSet(names []string) string {
	var b strings.Builder
	for _, n := range names {
		if n == "" || n == "." || n == ".." || strings.Contains(n, "/") {
			continue
		}
		if b.Len() == 0 {
			b.WriteByte('/')
		}
		b.WriteString(n)
		b.WriteByte('/')
	}
	return b.String()
}

// inKeepSet reports whether name is one of the names of set.
func inKeepSet(set, name string) bool {
	return name != "" && !strings.Contains(name, "/") && strings.Contains(set, "/"+name+"/")
}

// topDirs names the directories at dir's top level, in sorted order.
func topDirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}
