package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testpty"
	"github.com/skillhost/skillhost/internal/testskill"
)

// On a terminal, plain run shows output as it comes (issue 29, point 7):
// the script prints, then waits for a gate file the test creates only
// after it saw that output on the terminal. Escape sequences arrive
// shown, not acted on.
func TestRunStreamsToATerminal(t *testing.T) {
	bin, plugins := skillhostBinary(t)
	root := t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	testskill.Add(t, root, "ticker", testskill.Skill{Name: "ticker", Description: "test skill ticker", Body: "# ticker\n", Scripts: map[string]string{"tick.sh": "#!/bin/sh\nprintf 'first \\033]0;title\\007\\n'\n" +
		"i=0; while [ ! -e " + gate + " ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i+1)); done\necho second\n"}})
	master, slave := testpty.Open(t)
	cmd := exec.Command(bin, "--skills", root, "run", "ticker", "tick", "--strategy", "none")
	cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+plugins)
	cmd.Stdout, cmd.Stderr = slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	master.SetReadDeadline(time.Now().Add(60 * time.Second))
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte("first")) {
		n, err := master.Read(buf)
		if err != nil {
			t.Fatalf("the first output never reached the terminal while the run went on: %v (%q)", err, got)
		}
		got = append(got, buf[:n]...)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	slave.Close()
	for {
		n, err := master.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	if !strings.Contains(string(got), "second") || bytes.ContainsRune(got, 0x1b) || !strings.Contains(string(got), `\x1b]0;title\x07`) {
		t.Errorf("terminal got %q", got)
	}
}
