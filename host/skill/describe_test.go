package skill

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		name, file, text, want string
	}{
		{"docstring", "x.py", "#!/usr/bin/env python3\n\"\"\"\nQuick validation script for skills - minimal version\n\"\"\"\nimport sys\n", "Quick validation script for skills - minimal version"},
		{"docstring first paragraph", "x.py", "\"\"\"Unpack Office files\nfor editing.\n\nExamples:\n    python unpack.py\n\"\"\"\n", "Unpack Office files for editing."},
		{"single-quoted docstring after comments", "x.py", "# -*- coding: utf-8 -*-\n# Copyright 2024\n'Sum a column.'\n", "Sum a column."},
		{"docstring beats a comment", "x.py", "# A comment\n\"\"\"The docstring.\"\"\"\n", "The docstring."},
		{"python by shebang", "tool", "#!/usr/bin/env python3\n\"\"\"From the shebang.\"\"\"\n", "From the shebang."},
		{"argparse description", "x.py", "import argparse\np = argparse.ArgumentParser(\n    prog='x', description=\"Fill a PDF form.\")\n", "Fill a PDF form."},
		{"usage print", "x.py", "import sys\nif len(sys.argv) != 3:\n    print(\"Usage: convert.py [input pdf] [output directory]\")\n", "Usage: convert.py [input pdf] [output directory]"},
		{"usage echo with emoji", "x.sh", "#!/bin/bash\nset -e\necho \"❌ Usage: ./init.sh <project-name>\"\n", "Usage: ./init.sh <project-name>"},
		{"word usage is not a usage line", "x.sh", "#!/bin/bash\n# Report memory usage: per process\nps aux\n", "Report memory usage: per process"},
		{"usage appended to a comment", "x.sh", "#!/bin/sh\n# Deploy the site\necho 'usage: deploy ENV'\n", "Deploy the site. Usage: deploy ENV"},
		{"usage appended to a docstring", "x.py", "\"\"\"Extract form structure.\n\nUsage: python x.py <in.pdf> <out.json>\n\"\"\"\n", "Extract form structure. Usage: python x.py <in.pdf> <out.json>"},
		{"usage paragraph heading skipped", "x.py", "\"\"\"Unpack files.\n\nUsage:\n    python unpack.py IN OUT\n\"\"\"\n", "Unpack files."},
		{"set -e explanation skipped", "x.sh", "#!/bin/bash\n\n# Exit on error\nset -e\n\n# Detect Node version\nNODE=1\n", ""},
		{"set -euo explanation skipped", "x.sh", "#!/bin/bash\n# Fail fast on unset variables\nset -euo pipefail\n", ""},
		{"comment above set -e that is not about it", "x.sh", "#!/bin/bash\n# Deploy the site to staging\nset -e\n", "Deploy the site to staging"},
		{"comment separated from set -e", "x.sh", "#!/bin/bash\n# Build the bundle\n\nset -e\n", "Build the bundle"},
		{"banner as last resort", "x.sh", "#!/bin/bash\nset -e\n\necho \"📦 Bundling React app to single HTML artifact...\"\n", "Bundling React app to single HTML artifact"},
		{"no banner for python", "x.py", "print('Bundling everything now')\n", ""},
		{"js block comment", "x.js", "/**\n * Build the bundle.\n * @param x\n */\nconsole.log(1)\n", "Build the bundle."},
		{"comment after code is not a description", "x.sh", "#!/bin/bash\necho hi\n# Not this\n", ""},
		{"directives skipped", "x.rb", "#!/usr/bin/env ruby\n# -*- coding: utf-8 -*-\n# frozen\n", "frozen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Describe([]byte(tt.text), tt.file); got != tt.want {
				t.Errorf("Describe = %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzDescribe feeds arbitrary script heads to Describe: whatever a skill
// ships, describing it must not panic, and the result is bounded, trimmed
// and valid UTF-8 when the input is.
func FuzzDescribe(f *testing.F) {
	f.Add([]byte("#!/bin/bash\n# Exit on error\nset -e\necho \"usage: x\"\n"), "x.sh")
	f.Add([]byte("\"\"\"Doc\n\nUsage:\n  x\n\"\"\"\nimport argparse\nargparse.ArgumentParser(description='d')\n"), "x.py")
	f.Add([]byte("/**\n * Build.\n */\n"), "x.js")
	f.Add([]byte("r'''"), "x.py")
	f.Fuzz(func(t *testing.T, head []byte, file string) {
		d := Describe(head, file)
		if len([]rune(d)) > maxDescription {
			t.Fatalf("description of %d characters", len([]rune(d)))
		}
		if d != strings.TrimSpace(d) && !strings.HasSuffix(d, "…") {
			t.Fatalf("untrimmed description %q", d)
		}
		if utf8.Valid(head) && !utf8.ValidString(d) {
			t.Fatalf("invalid UTF-8 from valid input: %q", d)
		}
	})
}

// The quick test before the usage expression may say yes wrongly, never no.
func TestMayContainFold(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"# Usage: x IN OUT", true},
		{"echo 'USAGE: x'", true},
		{"print('usage:')", true},
		{"#!/bin/sh\n# Print a greeting\necho hi\n", false},
		{"# usage without the colon", false},
		{"usage", false},
		{"# uſage: x", true}, // (?i) folds ſ onto s
	} {
		if got := mayContainFold([]byte(tt.text), "usage:"); got != tt.want {
			t.Errorf("mayContainFold(%q) = %v, want %v", tt.text, got, tt.want)
		}
		if got := usageRe().Match([]byte(tt.text)); got && !mayContainFold([]byte(tt.text), "usage:") {
			t.Errorf("%q: the expression matches but the quick test says no", tt.text)
		}
	}
}
