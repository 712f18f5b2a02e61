package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSkillDoc(t *testing.T) {
	for _, c := range []struct {
		name, in, cut, wantName, wantHas, wantNot string
		ok                                        bool
	}{
		{"plain", "---\nname: PDF-Tools\ndescription: Merge PDFs.\nlicense: MIT\n---\n# Body\nUse qpdf.\n", "",
			"pdf-tools", "Merge PDFs.\n\n# Body\nUse qpdf.", "MIT", true},
		{"an unquoted colon, as many published skills have", "---\nname: discord\ndescription: Use when: you chat\nmetadata:\n  author: x\n---\nbody\n", "",
			"discord", "Use when: you chat", "author", true},
		{"a registry footer cut", "---\nname: a\ndescription: d\n---\nbody\n> Converted and distributed by X\n<!-- x -->\n", "> Converted and distributed by",
			"a", "body", "Converted", true},
		{"CRLF", "---\r\nname: b\r\ndescription: d\r\n---\r\nbody\r\n", "", "b", "body", "\r", true},
		{"no front matter", "# Just markdown\n", "", "", "", "", false},
		{"no name", "---\ndescription: d\n---\nbody\n", "", "", "", "", false},
		{"unterminated", "---\nname: a\n", "", "", "", "", false},
	} {
		d, ok := skillDoc([]byte(c.in), c.cut)
		name, text := docName(d), docText(d)
		if ok != c.ok || name != c.wantName || !strings.Contains(text, c.wantHas) || (c.wantNot != "" && strings.Contains(text, c.wantNot)) {
			t.Errorf("%s: name %q, ok %v, text %q", c.name, name, ok, text)
		}
	}
}

func TestSkillNames(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "folder-a"), 0o755)
	os.WriteFile(filepath.Join(dir, "folder-a", "SKILL.md"), []byte("---\nname: Other-Name\ndescription: d\n---\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "folder-b"), 0o755)
	os.WriteFile(filepath.Join(dir, "file.txt"), nil, 0o644)
	got, err := skillNames(dir)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"folder-a", "folder-b", "other-name"}) {
		t.Fatalf("skillNames = %q, %v", got, err)
	}
	if _, err := skillNames(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory gave no error")
	}
}
