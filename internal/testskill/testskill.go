// Package testskill writes skill directories for tests: the one helper
// behind every package's fixtures.
package testskill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write makes the directory dir (created with its parents) holding
// SKILL.md with skillMD, and files (slash-separated paths relative to dir,
// to contents); files under scripts/ are executable. It returns dir.
func Write(t testing.TB, dir, skillMD string, files map[string]string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skillMD), 0o644); err != nil {
		t.Fatal(err)
	}
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "scripts/") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// FrontMatter is SKILL.md text: the front matter's lines, then body.
func FrontMatter(body string, lines ...string) string {
	return "---\n" + strings.Join(lines, "\n") + "\n---\n" + body
}
