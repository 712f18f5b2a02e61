package sandbox

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
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
// fault plugin has no oneshot.Serve) over go-plugin after all; a
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
