package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A denial's advice is the least change that grants the path: the
// workspace, the operator's grant, then the ceiling; never a secret.
func TestRemedy(t *testing.T) {
	noUserConfig(t)
	project, data := t.TempDir(), t.TempDir()
	project, _ = filepath.EvalSymlinks(project)
	data, _ = filepath.EvalSymlinks(data)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("sandbox:\n  fs_read: [\".\", \""+data+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	h, err := Open(Options{ConfigPath: cfg, SkillRoots: []string{"../examples/skills"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, tt := range []struct {
		write bool
		path  string
		want  []string
	}{
		{false, filepath.Join(project, "form.pdf"), []string{"--workspace read ", "skills.grants.pdf.workspace: read"}},
		{true, filepath.Join(project, "out", "x.txt"), []string{"--workspace read-write"}},
		{false, filepath.Join(data, "in.csv"), []string{"skills.grants.pdf.fs_read: [\"" + data + "\"]"}},
		{false, "/srv/archive/in.csv", []string{"skills.grants.pdf.fs_read: [\"/srv/archive\"]", "add \"/srv/archive\" to sandbox.fs_read"}},
		{false, "/etc/shadow", []string{"looks like a secret"}},
		{false, "/home/u/.ssh/config", []string{"looks like a secret"}},
	} {
		got := h.remedy("pdf", tt.write, tt.path)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("remedy(%s) = %q, want it to say %q", tt.path, got, w)
			}
		}
		if strings.Contains(got, "secret") && strings.Contains(got, "skills.grants") {
			t.Errorf("remedy(%s) suggests granting a secret: %q", tt.path, got)
		}
	}
}
