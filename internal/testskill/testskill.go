// Package testskill writes skill directories for tests: the one helper
// behind every package's fixtures. Add writes a skill described by fields;
// Write is what it writes with, for a test that needs SKILL.md verbatim.
package testskill

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Skill is a skill for Add: its SKILL.md and its other files.
type Skill struct {
	// Name is the front matter's name; empty writes no name line.
	Name string
	// Description is the front matter's description, written as a Go
	// double-quoted string (strconv.Quote), which YAML reads back as it
	// was, colons and all; empty writes no description line.
	Description string
	// FrontMatter is more front matter, verbatim, after name and
	// description: YAML lines ("timeout: 1"), or deliberately broken
	// YAML on its own; a missing final newline is added.
	FrontMatter string
	// Body is the Markdown after the front matter, verbatim.
	Body string
	// Scripts are files under scripts/ (a name to its contents), written
	// executable unless Modes says otherwise.
	Scripts map[string]string
	// Modes give some Scripts (by name) another mode than 0755, as an
	// archive or a checkout without modes leaves them.
	Modes map[string]os.FileMode
	// Files are other files, as for Write: slash-separated paths
	// relative to the skill's directory, to contents.
	Files map[string]string
}

// Text is s's SKILL.md: "---", the name, description and FrontMatter
// lines, "---", then Body.
func (s Skill) Text() string {
	var b strings.Builder
	b.WriteString("---\n")
	if s.Name != "" {
		b.WriteString("name: " + s.Name + "\n")
	}
	if s.Description != "" {
		b.WriteString("description: " + strconv.Quote(s.Description) + "\n")
	}
	if s.FrontMatter != "" {
		b.WriteString(s.FrontMatter)
		if !strings.HasSuffix(s.FrontMatter, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("---\n")
	b.WriteString(s.Body)
	return b.String()
}

// Add writes s as the skill directory root/dir (created with its
// parents) and returns that directory. dir need not be s.Name: a test of
// how skills are found may name a folder differently, or leave the name
// out of the front matter.
func Add(t testing.TB, root, dir string, s Skill) string {
	t.Helper()
	files := make(map[string]string, len(s.Scripts)+len(s.Files))
	for rel, content := range s.Files {
		files[rel] = content
	}
	for name, content := range s.Scripts {
		files["scripts/"+name] = content
	}
	out := Write(t, filepath.Join(root, dir), s.Text(), files)
	for name, mode := range s.Modes {
		if err := os.Chmod(filepath.Join(out, "scripts", filepath.FromSlash(name)), mode); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

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
