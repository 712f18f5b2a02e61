//go:build linux

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/internal/testskill"
)

// A descriptor the caller of skillhost left open (here fd 3, a secret file
// opened without close-on-exec) never reaches a script, under any strategy:
// it starts with stdin, stdout and stderr alone. The control runs the same
// script straight from the caller, where it reads the secret.
func TestScriptGetsOnlyStdio(t *testing.T) {
	bin, plugins := skillhostBinary(t)
	if _, err := testbin.Build("./cmd/skillhost-sandbox-landlock"); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	script := "#!/bin/sh\nif cat <&3; then echo LEAKED; else echo closed; fi\n"
	dir := testskill.Add(t, root, "fds", testskill.Skill{Name: "fds", Description: "test skill fds", Body: "# fds\n", Scripts: map[string]string{"peek.sh": script}})
	secret, err := os.CreateTemp(t.TempDir(), "secret")
	if err != nil {
		t.Fatal(err)
	}
	secret.WriteString("the caller's secret\n")
	secret.Seek(0, 0)
	defer secret.Close()

	control := exec.Command("/bin/sh", dir+"/scripts/peek.sh")
	control.ExtraFiles = []*os.File{secret}
	if out, _ := control.CombinedOutput(); !strings.Contains(string(out), "LEAKED") {
		t.Fatalf("control: the script cannot read fd 3 even unconfined, so the test proves nothing: %s", out)
	}
	for _, strategy := range []string{"none", "null", "landlock"} {
		secret.Seek(0, 0)
		cmd := exec.Command(bin, "--skills", root, "run", "fds", "peek", "--strategy", strategy)
		cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+plugins, "SKILLHOST_SANDBOX__ENABLED=")
		cmd.ExtraFiles = []*os.File{secret}
		out, _ := cmd.CombinedOutput()
		if strings.Contains(string(out), "LEAKED") || strings.Contains(string(out), "secret") {
			t.Errorf("%s: the script read the caller's descriptor: %s", strategy, out)
		}
		if strategy != "landlock" && !strings.Contains(string(out), "closed") {
			t.Errorf("%s: %s", strategy, out)
		}
	}
}
