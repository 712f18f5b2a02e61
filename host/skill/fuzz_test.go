package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary SKILL.md contents to the parser. Whatever the
// input, parsing must not panic, and a bundle it accepts must have a
// non-blank name and description and trimmed instructions.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"../../testdata/skills/*/SKILL.md", "../../testdata/edge-cases/*/*.md"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("---\nname: &a x\ndescription: *a\n---\n"))
	f.Add([]byte("---\na: &a [*a]\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		defer func() {
			if el := time.Since(start); el > 2*time.Second {
				t.Fatalf("parsing %d bytes took %v", len(data), el)
			}
		}()
		s := &Skill{Dir: "/fuzz/x", File: "/fuzz/x/SKILL.md"}
		if err := s.parse(data); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if strings.TrimSpace(s.Name) == "" || strings.TrimSpace(s.Description) == "" {
			t.Fatalf("accepted a blank name or description: %q %q", s.Name, s.Description)
		}
		if s.Instructions != strings.TrimSpace(s.Instructions) {
			t.Fatalf("instructions not trimmed: %q", s.Instructions)
		}
		_ = Strict(s)
		for _, k := range s.Keys {
			_ = s.Field(k)
		}
	})
}

// FuzzShebang: any first line gives at most a program and one argument,
// neither empty nor padded with spaces or tabs, the program free of them
// (another control character, such as a CR before a space, stays in it,
// as the kernel would keep it).
func FuzzShebang(f *testing.F) {
	for _, seed := range []string{"#!/bin/sh\n", "#!/usr/bin/env python3 -u\n", "#!\t/bin/sh\t-e \r\n", "\ufeff#!/bin/bash", "#!", "#! \n", "echo hi"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		interp, ok := Shebang(head)
		if !ok && interp != nil {
			t.Fatalf("no #! line, but interp %q", interp)
		}
		if len(interp) > 2 {
			t.Fatalf("%d parts: %q", len(interp), interp)
		}
		for i, part := range interp {
			if part == "" || strings.Trim(part, " \t") != part || strings.Contains(part, "\n") {
				t.Fatalf("part %d is %q", i, part)
			}
		}
		if len(interp) > 0 && strings.ContainsAny(interp[0], " \t") {
			t.Fatalf("program %q has white space", interp[0])
		}
	})
}
