package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testskill"
)

// TestLeanSupervisors: installed side by side, the CLI's in-process
// strategy and the null plugin supervise each run with their lean
// supervisor binaries, not with a copy of themselves.
func TestLeanSupervisors(t *testing.T) {
	bin, dir := skillhostBinary(t)
	skills := t.TempDir()
	testskill.Add(t, skills, "parent", testskill.Skill{Name: "parent", Description: "names its supervisor", Body: "# parent\n",
		Scripts: map[string]string{"name.sh": "#!/bin/sh\nreadlink /proc/$PPID/exe\n"}})
	for strategy, want := range map[string]string{"none": "skillhost-supervisor-none", "null": "skillhost-supervisor-null"} {
		t.Run(strategy, func(t *testing.T) {
			cmd := exec.Command(bin, "--skills", skills, "run", "parent", "name", "--strategy", strategy)
			cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+dir, "SKILLHOST_SANDBOX__ENABLED=true")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("skillhost: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != filepath.Join(dir, want) {
				t.Errorf("the run's supervisor is %q, want %s in %s", got, want, dir)
			}
		})
	}
}

// TestPinnedLeanSupervisor: `plugins pin` pins a plugin's supervisor binary
// with it; runs then use it, and refuse to start once it stops matching.
func TestPinnedLeanSupervisor(t *testing.T) {
	bin, dir := skillhostBinary(t)
	skills := t.TempDir()
	testskill.Add(t, skills, "parent", testskill.Skill{Name: "parent", Description: "names its supervisor", Body: "# parent\n",
		Scripts: map[string]string{"name.sh": "#!/bin/sh\nreadlink /proc/$PPID/exe\n"}})
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("skills:\n  roots: ["+skills+"]\nplugins:\n  dirs: ["+dir+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	skillhost := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"--config", cfg}, args...)...)
		cmd.Env = append(os.Environ(), "SKILLHOST_SANDBOX__ENABLED=true")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := skillhost("plugins", "pin", "null"); err != nil || !strings.Contains(out, "null/supervisor") {
		t.Fatalf("plugins pin null: %v\n%s", err, out)
	}
	out, err := skillhost("run", "parent", "name", "--strategy", "null")
	if want := filepath.Join(dir, "skillhost-supervisor-null"); err != nil || strings.TrimSpace(out) != want {
		t.Fatalf("pinned run: %v, output %q, want the supervisor %s", err, out, want)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(null/supervisor["']?:\s*["']?)[0-9a-f]{64}`)
	if !re.Match(data) {
		t.Fatalf("no pin for null/supervisor in:\n%s", data)
	}
	if err := os.WriteFile(cfg, re.ReplaceAll(data, []byte("${1}"+strings.Repeat("0", 64))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = skillhost("run", "parent", "name", "--strategy", "null")
	if err == nil || !strings.Contains(out, "null/supervisor") || !strings.Contains(out, "does not match its pinned SHA-256") {
		t.Fatalf("run with a changed supervisor pin: %v\n%s", err, out)
	}
}
