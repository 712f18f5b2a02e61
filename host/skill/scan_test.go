package skill

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/testskill"
)

// officeShapes lays out the shapes of real published skills: Python
// scripts without the exec bit, a nested scripts/office/ package with
// library modules, schemas and templates, an __init__.py, and a module
// run as "python -m scripts.X".
var officeShapes = map[string]string{
	"__init__.py":                        "",
	"accept.py":                          "\"\"\"Accept all tracked changes.\"\"\"\nif __name__ == \"__main__\":\n    pass\n",
	"check.py":                           "import sys\nprint(sys.argv)\n",
	"utils.py":                           "def helper():\n    return 1\n",
	"office/pack.py":                     "\"\"\"Pack a directory into a DOCX file.\n\nUsage: pack.py DIR OUT\n\"\"\"\nif __name__ == \"__main__\":\n    pass\n",
	"office/helpers/__init__.py":         "",
	"office/helpers/merge_runs.py":       "\"\"\"Merge runs.\"\"\"\ndef merge():\n    pass\n",
	"office/validators/__init__.py":      "from .base import Base\n",
	"office/validators/base.py":          "\"\"\"Base validator.\"\"\"\nclass Base: pass\nif __name__ == \"__main__\":\n    raise RuntimeError(\"This module should not be run directly.\")\n",
	"connections.py":                     "\"\"\"Connections.\"\"\"\nfrom abc import ABC\n\nclass C(ABC):\n    pass\n",
	"office/schemas/wml.xsd":             "<xsd/>\n",
	"templates/comments.xml":             "<x/>\n",
	"requirements.txt":                   "pypdf\n",
	"bundle.tar.gz":                      "\x1f\x8b",
	"__pycache__/accept.cpython-312.pyc": "junk",
	"init.sh":                            "#!/bin/bash\n\n# Exit on error\nset -e\n\n# Detect Node version\nNODE=$(node -v)\n",
}

func TestScanShapesOfRealSkills(t *testing.T) {
	modes := map[string]os.FileMode{}
	for name := range officeShapes {
		modes[name] = 0o644 // as an archive or a checkout without modes leaves them
	}
	dir := testskill.Add(t, t.TempDir(), "s", testskill.Skill{Name: "s", Description: "d", Scripts: officeShapes, Modes: modes})
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range s.Tools {
		got[tool.Name] = tool.Rel + " | " + tool.Description
	}
	want := map[string]string{
		"accept": "scripts/accept.py | Accept all tracked changes.",
		// top-level code runs, in a package or not
		"check":       "scripts/check.py | check (scripts/check.py)",
		"office_pack": "scripts/office/pack.py | Pack a directory into a DOCX file. Usage: pack.py DIR OUT",
		"init":        "scripts/init.sh | init (scripts/init.sh)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tools:\n got %q\nwant %q", got, want)
	}
	if len(s.Warnings) != 0 || s.Skipped != 0 {
		t.Errorf("warnings %q, skipped %d; data files, packages and library modules are no warnings", s.Warnings, s.Skipped)
	}
	// but each is listed with its reason
	notTools := map[string]string{}
	for _, n := range s.NotTools {
		notTools[n.Rel] = n.Reason
	}
	wantNot := map[string]string{
		"scripts/__init__.py":                   "a package's __init__.py",
		"scripts/utils.py":                      reasonLibrary,
		"scripts/office/helpers/__init__.py":    "a package's __init__.py",
		"scripts/office/helpers/merge_runs.py":  reasonLibrary,
		"scripts/office/validators/__init__.py": "a package's __init__.py",
		"scripts/office/validators/base.py":     reasonRefuses,
		"scripts/connections.py":                reasonLibrary,
		"scripts/office/schemas/wml.xsd":        "a data file (.xsd)",
		"scripts/templates/comments.xml":        "a data file (.xml)",
		"scripts/requirements.txt":              "a data file (.txt)",
		"scripts/bundle.tar.gz":                 "a data file (.gz)",
		"scripts/__pycache__/":                  "a cache or dependency directory, not looked into",
	}
	if !reflect.DeepEqual(notTools, wantNot) {
		t.Errorf("not tools:\n got %q\nwant %q", notTools, wantNot)
	}
}

func TestScanRequireExec(t *testing.T) {
	dir := testskill.Add(t, t.TempDir(), "s", testskill.Skill{Name: "s", Description: "d", Scripts: map[string]string{
		"run.py":      "\"\"\"Runs.\"\"\"\n",
		"data.json":   "{}\n",
		"ok.sh":       "# Fine\necho ok\n",
		"sub/deep.py": "print(1)\n",
	}, Modes: map[string]os.FileMode{"run.py": 0o644, "data.json": 0o644, "sub/deep.py": 0o644}})
	s, err := ParseWith(dir, Options{RequireExec: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 1 || s.Tools[0].Name != "ok" {
		t.Errorf("tools = %+v, want only ok", s.Tools)
	}
	var warnings []string
	warnings = append(warnings, s.Warnings...)
	sort.Strings(warnings)
	want := []string{"scripts/data.json: not executable, skipping", "scripts/run.py: not executable, skipping", "scripts/sub/deep.py: not executable, skipping"}
	if !reflect.DeepEqual(warnings, want) || s.Skipped != 3 {
		t.Errorf("warnings = %q (skipped %d), want %q", warnings, s.Skipped, want)
	}
}

func TestUniqueToolNames(t *testing.T) {
	dir := testskill.Add(t, t.TempDir(), "s", testskill.Skill{Name: "s", Description: "d", Scripts: map[string]string{
		"pack.py":                       "print(1)\n",
		"pack.sh":                       "echo 1\n",
		"a/b.py":                        "print(1)\n",
		"a_b.py":                        "print(1)\n",
		strings.Repeat("x", 70) + ".sh": "echo\n",
	}})
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range s.Tools {
		names = append(names, tool.Name)
		if len(tool.Name) > MaxToolName {
			t.Errorf("%q is longer than %d", tool.Name, MaxToolName)
		}
	}
	sort.Strings(names)
	want := []string{"a_b", "a_b_py", "pack", "pack_sh", strings.Repeat("x", 64)}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
}

func TestScriptWithoutMainOutsideAPackage(t *testing.T) {
	dir := testskill.Add(t, t.TempDir(), "s", testskill.Skill{Name: "s", Description: "d", Scripts: map[string]string{"check_fields.py": "import sys\nprint(sys.argv)\n"}, Modes: map[string]os.FileMode{"check_fields.py": 0o644}})
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 1 || s.Tools[0].Name != "check_fields" || s.Tools[0].Interpreter[0] != "python3" {
		t.Errorf("tools = %+v", s.Tools)
	}
}

func TestShebang(t *testing.T) {
	for _, tt := range []struct {
		head   string
		interp []string
		ok     bool
	}{
		{"#!/bin/sh\necho\n", []string{"/bin/sh"}, true},
		{"#! /usr/bin/env python3\n", []string{"/usr/bin/env", "python3"}, true},
		{"#!/usr/bin/env python3 -u -W error\n", []string{"/usr/bin/env", "python3 -u -W error"}, true},
		{"#!/bin/sh\t-e\n", []string{"/bin/sh", "-e"}, true},
		{"#!/bin/sh \t -e \t\n", []string{"/bin/sh", "-e"}, true},
		{"#!/bin/sh\r\n", []string{"/bin/sh"}, true},
		{"\ufeff#!/usr/bin/python3\n", []string{"/usr/bin/python3"}, true},
		{"#!\n", nil, true},
		{"#! \t\n", nil, true},
		{"#!/bin/sh", []string{"/bin/sh"}, true},
		{"# comment\n#!/bin/sh\n", nil, false},
		{"", nil, false},
		{"\x7fELF", nil, false},
	} {
		interp, ok := Shebang([]byte(tt.head))
		if !reflect.DeepEqual(interp, tt.interp) || ok != tt.ok {
			t.Errorf("Shebang(%q) = %q, %v; want %q, %v", tt.head, interp, ok, tt.interp, tt.ok)
		}
	}
}
