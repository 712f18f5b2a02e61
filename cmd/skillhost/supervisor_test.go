package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
