package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noUserConfig keeps the tests from reading the user's configuration.
func noUserConfig(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestValidate(t *testing.T) {
	noUserConfig(t)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"skills/good-skill/SKILL.md":   "---\nname: good-skill\ndescription: Does good things.\n---\nBody.\n",
		"skills/bad/SKILL.md":          "---\nname: bad\n---\nNo description.\n",
		"skills/extra/SKILL.md":        "---\nname: extra\ndescription: Has more.\nversion: 2\n---\nBody.\n",
		"skills/node_modules/SKILL.md": "---\nname: dep\n---\n",
		"skills/notes/readme.txt":      "not a skill",
		"skills/file.txt":              "not a directory",
		"empty/.keep":                  "",
		"single/SKILL.md":              "---\nname: single\ndescription: One.\n---\nBody.\n",
	})
	skills := filepath.Join(root, "skills")
	type verdict struct {
		path   string
		valid  bool
		errors string // a substring of the joined errors
	}
	tests := []struct {
		name   string
		strict bool
		paths  []string
		want   []verdict
	}{
		{"a skill directory", false, []string{filepath.Join(skills, "good-skill")},
			[]verdict{{filepath.Join(skills, "good-skill"), true, ""}}},
		{"a SKILL.md", false, []string{filepath.Join(root, "single", "SKILL.md")},
			[]verdict{{filepath.Join(root, "single", "SKILL.md"), true, ""}}},
		{"a root: every skill, node_modules and skill-less directories passed over", false, []string{skills}, []verdict{
			{filepath.Join(skills, "bad"), false, "missing 'description'"},
			{filepath.Join(skills, "extra"), true, ""},
			{filepath.Join(skills, "good-skill"), true, ""},
		}},
		{"strict: the specification's keys only", true, []string{filepath.Join(skills, "extra"), filepath.Join(skills, "good-skill")}, []verdict{
			{filepath.Join(skills, "extra"), false, "unexpected front-matter keys: version"},
			{filepath.Join(skills, "good-skill"), true, ""},
		}},
		{"missing path and empty root, in order", false, []string{filepath.Join(root, "nope"), filepath.Join(root, "empty")}, []verdict{
			{filepath.Join(root, "nope"), false, "no such file or directory"},
			{filepath.Join(root, "empty"), false, "no SKILL.md here or in its subdirectories"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Validate(ValidateOptions{Strict: tt.strict}, tt.paths...)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d validations, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Path != w.path || g.Valid != w.valid || !strings.Contains(strings.Join(g.Errors, "; "), w.errors) {
					t.Errorf("#%d = %+v, want %+v", i, g, w)
				}
				if g.Errors == nil || g.Warnings == nil {
					t.Errorf("#%d: nil lists print as null: %+v", i, g)
				}
				if g.Valid != (len(g.Errors) == 0) {
					t.Errorf("#%d: valid %v with errors %q", i, g.Valid, g.Errors)
				}
			}
		})
	}
}

func TestValidateConfigError(t *testing.T) {
	noUserConfig(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	writeFiles(t, dir, map[string]string{"config.yaml": "scripts:\n  require_exec: perhaps\n"})
	got, err := Validate(ValidateOptions{ConfigPath: cfg}, dir)
	if err == nil || got != nil {
		t.Fatalf("a broken configuration validated %+v, %v", got, err)
	}
	if ExitStatus(err) != ExitUsage || !strings.Contains(err.Error(), "config.yaml") {
		t.Errorf("error %v: status %d", err, ExitStatus(err))
	}
}
