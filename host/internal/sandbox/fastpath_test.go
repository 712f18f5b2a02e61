package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// environOf is the environment process pid was started with.
func environOf(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Skipf("cannot read the plugin's environment: %v", err)
	}
	return string(data)
}

// TestOneShotFastPath: a one-shot host starts a plugin that speaks the fast
// path over its pipes (no go-plugin socket), and one that does not (the
// fault plugin serves WithoutFastPath) over go-plugin after all; a
// long-lived host always uses go-plugin. Each call works either way.
func TestOneShotFastPath(t *testing.T) {
	for _, tc := range []struct {
		name     string
		plugin   string
		oneShot  bool
		wantPipe bool
	}{
		{"null, one-shot", Null, true, true},
		{"null, long-lived", Null, false, false},
		{"no fast path, one-shot", "fault", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m *Manager
			if tc.plugin == "fault" {
				m = newFaultRig(t, func(o *Options) { o.OneShot = tc.oneShot }).m
			} else {
				m = manager(t, func(o *Options) { o.OneShot = tc.oneShot })
			}
			out, res, err := execute(context.Background(), m.Executor(tc.plugin), request("echo fast"))
			if err != nil || res.ExitCode != 0 || out != "fast\n" {
				t.Fatalf("call: %v, %+v, %q", err, res, out)
			}
			env := environOf(t, m.Pid(tc.plugin))
			pipe := strings.Contains(env, "SKILLHOST_PLUGIN_PIPE=")
			socket := strings.Contains(env, "PLUGIN_UNIX_SOCKET_DIR=")
			if pipe != tc.wantPipe || socket == tc.wantPipe {
				t.Errorf("plugin started with the pipe variable %v and go-plugin's socket %v; want the fast path %v", pipe, socket, tc.wantPipe)
			}
		})
	}
}

// TestOneShotFastPathCrash: a plugin on the fast path that dies under a
// call is reported as crashed, as over go-plugin, and the next call starts
// a fresh one.
func TestOneShotFastPathCrash(t *testing.T) {
	m := manager(t, func(o *Options) { o.OneShot = true })
	ex := m.Executor(Null)
	if _, _, err := execute(context.Background(), ex, request("true")); err != nil {
		t.Fatal(err)
	}
	pid := m.Pid(Null)
	if pid == 0 || !strings.Contains(environOf(t, pid), "SKILLHOST_PLUGIN_PIPE=") {
		t.Fatalf("plugin %d is not on the fast path", pid)
	}
	errc := make(chan error, 1)
	go func() {
		_, _, err := execute(context.Background(), ex, request("echo started; sleep 60"))
		errc <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(childrenOf(pid)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started a command")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "crashed") {
			t.Fatalf("call to a killed plugin: %v, want it reported as crashed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call to a killed plugin did not return")
	}
	// The next call starts a new plugin process (after the manager's
	// backoff, which it waits out itself).
	if _, _, err := execute(context.Background(), ex, request("true")); err != nil {
		t.Fatalf("call after the crash: %v", err)
	}
	if next := m.Pid(Null); next == pid || next == 0 {
		t.Errorf("plugin pid after the crash %d, want a fresh process (was %d)", next, pid)
	}
}

// startedFrom is the base name of the binary process pid runs.
func startedFrom(t *testing.T, pid int) string {
	t.Helper()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Skipf("cannot read the plugin's binary: %v", err)
	}
	return filepath.Base(exe)
}

// TestOneShotBinary: a one-shot host starts the plugin's binary for
// one-shot hosts (skillhost-oneshot-NAME, no go-plugin) where it is beside
// the plugin; a pinned plugin's own binary, which the pin covers; the
// plugin's own binary for a call by name, which a binary for one-shot hosts
// need not serve (the Landlock one has no egress proxy); and the plugin's
// own binary again when the one-shot one does not start. A long-lived host
// never starts it.
func TestOneShotBinary(t *testing.T) {
	sum, err := Sum(filepath.Join(binDir, "skillhost-sandbox-null"))
	if err != nil {
		t.Fatal(err)
	}
	broken := t.TempDir()
	for _, name := range []string{"skillhost-sandbox-null", "skillhost-supervisor-null"} {
		copyFile(t, filepath.Join(binDir, name), filepath.Join(broken, name))
	}
	// From another build, say: it exits before it answers.
	if err := os.WriteFile(filepath.Join(broken, "skillhost-oneshot-null"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		mod     func(*Options)
		want    string
		oneShot bool
		byName  bool
	}{
		{"beside the plugin", nil, "skillhost-oneshot-null", true, false},
		{"pinned plugin", func(o *Options) { o.Pins = map[string]string{Null: sum} }, "skillhost-sandbox-null", true, false},
		{"network by name", nil, "skillhost-sandbox-null", true, true},
		{"does not start", func(o *Options) { o.Dirs = []string{broken} }, "skillhost-sandbox-null", true, false},
		{"long-lived host", nil, "skillhost-sandbox-null", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := manager(t, func(o *Options) {
				o.OneShot = tc.oneShot
				if tc.mod != nil {
					tc.mod(o)
				}
			})
			out, res, err := execute(context.Background(), m.ExecutorFor(Choice{Name: Null, ByName: tc.byName}), request("echo lean"))
			if err != nil || res.ExitCode != 0 || out != "lean\n" {
				t.Fatalf("call: %v, %+v, %q", err, res, out)
			}
			pid := m.Pid(m.instanceKey(Null, tc.byName))
			if pid == 0 {
				t.Fatal("no plugin process after the call")
			}
			if got := startedFrom(t, pid); got != tc.want {
				t.Errorf("the host started %s, want %s", got, tc.want)
			}
			// The binary for one-shot hosts starts on one processor.
			one := strings.Contains(environOf(t, pid), "GOMAXPROCS=1\x00")
			if want := strings.HasPrefix(tc.want, "skillhost-oneshot-"); one != want {
				t.Errorf("%s started with GOMAXPROCS=1 %v, want %v", tc.want, one, want)
			}
		})
	}
}

// A call by name after a call that started the binary for one-shot hosts
// (a host that breaks its promise of one call) gets a process of the
// plugin's own binary, kept for later calls by name, and the first
// process is left as it was.
func TestOneShotBinaryThenByName(t *testing.T) {
	m := manager(t, func(o *Options) { o.OneShot = true })
	pids := map[bool]int{}
	for i, byName := range []bool{false, true, true, false} {
		out, res, err := execute(context.Background(), m.ExecutorFor(Choice{Name: Null, ByName: byName}), request("echo again"))
		if err != nil || res.ExitCode != 0 || out != "again\n" {
			t.Fatalf("call %d: %v, %+v, %q", i, err, res, out)
		}
		pid := m.Pid(m.instanceKey(Null, byName))
		want := map[bool]string{false: "skillhost-oneshot-null", true: "skillhost-sandbox-null"}[byName]
		if got := startedFrom(t, pid); got != want {
			t.Errorf("call %d (by name %v) ran in %s, want %s", i, byName, got, want)
		}
		if pids[byName] == 0 {
			pids[byName] = pid
		} else if pid != pids[byName] {
			t.Errorf("call %d (by name %v) ran in process %d, want the one of the earlier call, %d", i, byName, pid, pids[byName])
		}
	}
	if pids[true] == pids[false] {
		t.Errorf("calls by name and calls not by name shared process %d", pids[true])
	}
}

// OneShotBinary reports the binary for one-shot hosts beside a plugin and
// whether a one-shot host starts it: not once a pin covers the plugin or
// its supervisor, and nothing where there is no such binary.
func TestOneShotBinaryReport(t *testing.T) {
	c := Candidate{Name: Null, Path: filepath.Join(binDir, "skillhost-sandbox-null")}
	lean := filepath.Join(binDir, "skillhost-oneshot-null")
	for _, tc := range []struct {
		name string
		pins map[string]string
		used bool
	}{
		{"unpinned", nil, true},
		{"plugin pinned", map[string]string{Null: "00"}, false},
		{"supervisor pinned", map[string]string{Null + SupervisorPin: "00"}, false},
		{"another plugin pinned", map[string]string{"landlock": "00"}, true},
	} {
		if path, used := OneShotBinary(c, tc.pins); path != lean || used != tc.used {
			t.Errorf("%s: OneShotBinary = %q, %v; want %q, %v", tc.name, path, used, lean, tc.used)
		}
	}
	alone := Candidate{Name: Null, Path: filepath.Join(t.TempDir(), "skillhost-sandbox-null")}
	if path, used := OneShotBinary(alone, nil); path != "" || used {
		t.Errorf("without one beside the plugin: %q, %v", path, used)
	}
}
