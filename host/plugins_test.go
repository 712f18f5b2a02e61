package host

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/sandbox"
)

// The confinement a run prepares for (interpreter resolution, grants) and
// the confinement the strategy selection reports come from one answer.
func TestExecutorReportsConfinement(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h, err := Open(Options{SkillRoots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	auto, autoConfines := sandbox.AutoFor(runtime.GOOS)
	for _, tt := range []struct {
		name, override string
		trust          string
		wantName       string
		wantConfine    bool
	}{
		{"configured auto", "", "", auto, autoConfines},
		{"auto", sandbox.Auto, "", auto, autoConfines},
		{"in-process", InProcessName, "", InProcessName, false},
		{"null plugin", sandbox.Null, "", sandbox.Null, false},
		{"landlock", sandbox.Landlock, "", sandbox.Landlock, true},
		{"seatbelt", sandbox.Seatbelt, "", sandbox.Seatbelt, true},
		{"a third-party plugin", "firecracker", "", "firecracker", true},
		{"trust: core runs under null", "", grant.TrustCore, sandbox.Null, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ex, c := h.executor(grant.Grant{Trust: tt.trust}, tt.override)
			if ex == nil || c.Name != tt.wantName || c.Confines != tt.wantConfine {
				t.Errorf("executor = %T, %+v; want %q, %v", ex, c, tt.wantName, tt.wantConfine)
			}
			if info, err := ex.Info(context.Background()); c.Name == InProcessName && (err != nil || info.Name != InProcessName) {
				t.Errorf("executor %T for strategy %q: %+v, %v", ex, c.Name, info, err)
			}
		})
	}
	// AutoFor answers for itself; it must agree with Choose's definition.
	for _, goos := range []string{"linux", "darwin", "windows", "freebsd"} {
		name, confine := sandbox.AutoFor(goos)
		if c := sandbox.Choose(sandbox.Policy{Enabled: true}, name, false); confine != c.Confines {
			t.Errorf("AutoFor(%s) = %s, %v; Choose says %+v", goos, name, confine, c)
		}
	}
}

// Options.PluginDirs is where an embedding program's plugins are.
func TestOptionsPluginDirs(t *testing.T) {
	noUserConfig(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "skillhost-sandbox-mine"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := Open(Options{SkillRoots: []string{"../examples/skills"}, PluginDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	found, _ := h.Sandbox().Plugins()
	if c, ok := found["mine"]; !ok || c.Path != filepath.Join(dir, "skillhost-sandbox-mine") {
		t.Errorf("plugins found: %v", found)
	}
}

// A plugin's environment is the few variables it needs from the host's,
// GOMAXPROCS among them (the plugins choose one processor when it is not
// set); nothing else, no secret, reaches it.
func TestPluginEnvPassesOnlyWhatPluginsNeed(t *testing.T) {
	got := pluginEnv([]string{"PATH=/bin", "GOMAXPROCS=4", "AWS_SECRET_ACCESS_KEY=x", "HOME=/root", "TMPDIR=/t", "GOMAXPROCSX=1"})
	want := []string{"PATH=/bin", "GOMAXPROCS=4", "TMPDIR=/t"}
	if !slices.Equal(got, want) {
		t.Errorf("pluginEnv = %q, want %q", got, want)
	}
}
