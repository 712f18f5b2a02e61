package skill

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// validate --strict names skillhost's own front-matter keys as extensions
// of the specification, and says how to stay portable (issue 35).
func TestStrictNamesSkillhostExtensions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pdf")
	writeFile(t, filepath.Join(dir, FileName), "---\nname: pdf\ndescription: reads PDFs\nfs_read: [\"~/docs\"]\ntimeout: 30\nversion: 2\n---\n", 0o644)
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	problems := Strict(s)
	want := "fs_read, timeout: skillhost's own front-matter keys, an extension of the specification: skillhost reads them, other agents ignore them and strict validators reject them; " +
		"to stay portable, leave them out of SKILL.md and grant the same in skillhost's configuration (skills.grants.pdf)"
	if !slices.Contains(problems, want) {
		t.Errorf("Strict = %q, want it to hold %q", problems, want)
	}
	for _, p := range problems {
		if strings.Contains(p, "version:") || strings.HasPrefix(p, "version") {
			t.Errorf("version is not skillhost's: %q", p)
		}
	}
}
