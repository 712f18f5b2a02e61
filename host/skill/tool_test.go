package skill

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testskill"
)

func TestToolName(t *testing.T) {
	tests := map[string]string{
		"check-deploy.sh": "check_deploy",
		"hello.sh":        "hello",
		"a.b.c.sh":        "a_b_c",
		"über.sh":         "ber",
		"123.sh":          "123",
		".hidden":         "",
		"Makefile":        "Makefile",
		"--x--.py":        "x",
		"run  me!.rb":     "run_me",
		"foo.":            "foo",
		"a..sh":           "a",
	}
	for in, want := range tests {
		if got := ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScriptedFixture(t *testing.T) {
	s, err := Parse(filepath.Join(fixtures, "scripted_skill"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Scripts) != 1 || filepath.Base(s.Scripts[0]) != "hello.sh" {
		t.Fatalf("Scripts = %q", s.Scripts)
	}
	if len(s.Tools) != 1 {
		t.Fatalf("Tools = %+v", s.Tools)
	}
	tool := s.Tools[0]
	if tool.Name != "hello" || tool.Description != "Say hello to the world" {
		t.Errorf("tool = %+v", tool)
	}
	if !reflect.DeepEqual(tool.Interpreter, []string{"/usr/bin/env", "bash"}) {
		t.Errorf("Interpreter = %q", tool.Interpreter)
	}
	if got := tool.Command([]string{"a b"}); !reflect.DeepEqual(got, []string{"/usr/bin/env", "bash", tool.Script, "a b"}) {
		t.Errorf("Command = %q", got)
	}
	if s.Tool("hello") == nil || s.Tool("nope") != nil {
		t.Error("Tool lookup")
	}
}

func TestNoScripts(t *testing.T) {
	s, err := Parse(filepath.Join(fixtures, "test_skill"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Scripts) != 0 || len(s.Tools) != 0 {
		t.Fatalf("scripts=%q tools=%+v", s.Scripts, s.Tools)
	}
}

func TestToolsFromScripts(t *testing.T) {
	dir := testskill.Add(t, t.TempDir(), "s", testskill.Skill{Name: "s", Description: "d", Scripts: map[string]string{
		"check-deploy.sh": "#!/bin/sh\n# Check a deploy\necho ok\n",
		"a_b.py":          "print('x')\n",
		"a-b.sh":          "# collides with a_b\n",
		"notes.txt":       "not a tool\n",
		".hidden":         "# empty name\n",
		"build.js":        "// Build the bundle\nconsole.log(1)\n",
		"env.rb":          "#!/usr/bin/env -S ruby -w\n# -*- coding: utf-8 -*-\n# shellcheck disable=SC2034\n\n# Ruby tool\n",
		"deep.sh":         "#!/bin/bash\necho code\n# Not a header comment\n",
		"plain":           "echo no extension\n",
	}, Modes: map[string]os.FileMode{"notes.txt": 0o644}})
	if err := os.MkdirAll(filepath.Join(dir, "scripts", "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "scripts", "subdir", "nested.sh"), "echo nested\n", 0o755)
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range s.Scripts {
		rel, _ := filepath.Rel(filepath.Join(dir, "scripts"), p)
		names = append(names, rel)
	}
	wantScripts := []string{".hidden", "a-b.sh", "a_b.py", "build.js", "check-deploy.sh", "deep.sh", "env.rb", "notes.txt", "plain", "subdir/nested.sh"}
	if !reflect.DeepEqual(names, wantScripts) {
		t.Errorf("Scripts = %q, want %q", names, wantScripts)
	}
	type want struct {
		desc   string
		interp []string
	}
	wants := map[string]want{
		"a_b":           {"collides with a_b", []string{"bash"}}, // a-b.sh sorts first and takes the name
		"a_b_py":        {"a b py (scripts/a_b.py)", []string{"python3"}},
		"build":         {"Build the bundle", []string{"node"}},
		"check_deploy":  {"Check a deploy", []string{"/bin/sh"}},
		"deep":          {"deep (scripts/deep.sh)", []string{"/bin/bash"}},
		"env":           {"Ruby tool", []string{"/usr/bin/env", "-S ruby -w"}},
		"plain":         {"plain (scripts/plain)", []string{"bash"}},
		"subdir_nested": {"subdir nested (scripts/subdir/nested.sh)", []string{"bash"}},
	}
	if len(s.Tools) != len(wants) {
		t.Errorf("got %d tools: %+v", len(s.Tools), s.Tools)
	}
	for _, tool := range s.Tools {
		w, ok := wants[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		if tool.Description != w.desc || !reflect.DeepEqual(tool.Interpreter, w.interp) {
			t.Errorf("tool %s: desc=%q interp=%q, want %q %q", tool.Name, tool.Description, tool.Interpreter, w.desc, w.interp)
		}
	}
	warnings := strings.Join(s.Warnings, "\n")
	if want := "scripts/.hidden: the file name gives an empty tool name, skipping"; warnings != want {
		t.Errorf("warnings = %q, want only %q (data files are skipped silently)", warnings, want)
	}
	if s.Skipped != 1 {
		t.Errorf("Skipped = %d, want 1", s.Skipped)
	}
}

func TestScriptSymlinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "evil.sh")
	writeFile(t, outside, "#!/bin/sh\necho evil\n", 0o755)
	dir := testskill.Add(t, t.TempDir(), "s", testskill.Skill{Name: "s", Description: "d", Scripts: map[string]string{"real.sh": "# Real\necho real\n"}})
	writeFile(t, filepath.Join(dir, "lib", "helper.sh"), "# Helper\n", 0o755)
	for link, target := range map[string]string{
		"escape.sh": outside,
		"inside.sh": "../lib/helper.sh",
		"broken.sh": "../nope.sh",
		"loop.sh":   "loop.sh",
	} {
		if err := os.Symlink(target, filepath.Join(dir, "scripts", link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tool := range s.Tools {
		tools = append(tools, tool.Name)
	}
	if !reflect.DeepEqual(tools, []string{"inside", "real"}) {
		t.Errorf("tools = %q", tools)
	}
	warnings := strings.Join(s.Warnings, "\n")
	for _, w := range []string{"scripts/escape.sh: symlink resolves outside the skill directory", "scripts/broken.sh: broken symlink", "scripts/loop.sh: broken symlink"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q:\n%s", w, warnings)
		}
	}
}

// A sibling whose name extends the skill directory's (s-evil next to s)
// shares its prefix but is outside it: the containment check works on
// whole path components, for a script, for scripts/ itself and for
// SKILL.md.
func TestSymlinksIntoPrefixSibling(t *testing.T) {
	dir := testskill.Add(t, t.TempDir(), "s", testskill.Skill{Name: "s", Description: "d", Scripts: map[string]string{"real.sh": "# Real\necho real\n"}})
	sibling := dir + "-evil"
	writeFile(t, filepath.Join(sibling, "evil.sh"), "#!/bin/sh\necho evil\n", 0o755)
	writeFile(t, filepath.Join(sibling, FileName), "---\nname: s\ndescription: evil\n---\n", 0o644)
	if err := os.Symlink(filepath.Join(sibling, "evil.sh"), filepath.Join(dir, "scripts", "evil.sh")); err != nil {
		t.Fatal(err)
	}
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 1 || s.Tools[0].Name != "real" {
		t.Errorf("tools = %+v, want only real", s.Tools)
	}
	if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, "scripts/evil.sh: symlink resolves outside the skill directory") {
		t.Errorf("warnings lack the refusal of scripts/evil.sh:\n%s", w)
	}

	scriptsLink := testskill.Add(t, t.TempDir(), "s", testskill.Skill{Name: "s", Description: "d"})
	writeFile(t, filepath.Join(scriptsLink+"-evil", "evil.sh"), "#!/bin/sh\necho evil\n", 0o755)
	if err := os.Symlink(scriptsLink+"-evil", filepath.Join(scriptsLink, "scripts")); err != nil {
		t.Fatal(err)
	}
	s, err = Parse(scriptsLink)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 0 || !strings.Contains(strings.Join(s.Warnings, "\n"), "scripts/ is a symlink that resolves outside the skill directory") {
		t.Errorf("scripts/ into a prefix sibling: tools %+v, warnings %q", s.Tools, s.Warnings)
	}

	mdLink := filepath.Join(t.TempDir(), "m")
	writeFile(t, filepath.Join(mdLink+"-evil", FileName), "---\nname: m\ndescription: evil\n---\n", 0o644)
	if err := os.MkdirAll(mdLink, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(mdLink+"-evil", FileName), filepath.Join(mdLink, FileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(mdLink); err == nil || !strings.Contains(err.Error(), "resolves outside the skill directory") {
		t.Errorf("SKILL.md into a prefix sibling: err = %v, want a refusal", err)
	}
}

func TestInSkill(t *testing.T) {
	for _, tt := range []struct {
		target, dir string
		want        bool
	}{
		{"/a/s", "/a/s", true},
		{"/a/s/scripts/x.sh", "/a/s", true},
		{"/a/s-evil/x.sh", "/a/s", false},
		{"/a/sx", "/a/s", false},
		{"/a", "/a/s", false},
		{"/etc/passwd", "/", false}, // a skill at / holds nothing a link may reach
		{"/", "/", false},
	} {
		if got := inSkill(tt.target, tt.dir); got != tt.want {
			t.Errorf("inSkill(%q, %q) = %v, want %v", tt.target, tt.dir, got, tt.want)
		}
	}
}
