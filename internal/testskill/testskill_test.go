package testskill

import (
	"os"
	"path/filepath"
	"testing"
)

func TestText(t *testing.T) {
	for _, c := range []struct {
		s    Skill
		want string
	}{
		{Skill{Name: "csv", Description: "Summarize CSV files: rows and columns.", Body: "Use awk.\n"},
			"---\nname: csv\ndescription: \"Summarize CSV files: rows and columns.\"\n---\nUse awk.\n"},
		{Skill{Name: "slow", Description: "test skill slow", FrontMatter: "timeout: 1\n", Body: "# slow\n"},
			"---\nname: slow\ndescription: \"test skill slow\"\ntimeout: 1\n---\n# slow\n"},
		{Skill{FrontMatter: "name: [\ndescription: x"},
			"---\nname: [\ndescription: x\n---\n"},
	} {
		if got := c.s.Text(); got != c.want {
			t.Errorf("Text() = %q, want %q", got, c.want)
		}
	}
}

func TestAdd(t *testing.T) {
	root := t.TempDir()
	dir := Add(t, root, "folder", Skill{Name: "kit", Description: "tools",
		Scripts: map[string]string{"run.sh": "#!/bin/sh\n", "data.txt": "x\n"}, Modes: map[string]os.FileMode{"data.txt": 0o644},
		Files: map[string]string{"references/a.md": "# A\n"}})
	if dir != filepath.Join(root, "folder") {
		t.Fatalf("Add returned %s", dir)
	}
	for rel, exec := range map[string]bool{"SKILL.md": false, "scripts/run.sh": true, "scripts/data.txt": false, "references/a.md": false} {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm()&0o100 != 0; got != exec {
			t.Errorf("%s executable = %v, want %v", rel, got, exec)
		}
	}
}
