package host

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func writeScript(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A submodule is checked too, after its package (issue 35): pypdf may be
// installed in a version without pypdf.annotations.
func TestTopImportsSubmodules(t *testing.T) {
	script := writeScript(t, "x.py", `from __future__ import annotations
import os.path, json as j
from pypdf.annotations import FreeText
import pypdf
from . import sibling
import a.b.c  # comment
    import indented
`)
	got := topImports(script)
	want := []string{"os", "os.path", "json", "pypdf", "pypdf.annotations", "a", "a.b", "a.b.c"}
	if !slices.Equal(got, want) {
		t.Errorf("topImports = %q, want %q", got, want)
	}
}

func TestWithoutSubmodulesOf(t *testing.T) {
	got := withoutSubmodulesOf([]string{"pypdf", "pypdf.annotations", "lxml.etree", "numpy"})
	if want := []string{"pypdf", "lxml.etree", "numpy"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestMissingModule(t *testing.T) {
	out := "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    from pypdf.annotations import FreeText\nModuleNotFoundError: No module named 'pypdf.annotations'\n"
	if got := MissingModule(out); got != "pypdf.annotations" {
		t.Errorf("MissingModule = %q", got)
	}
	if got := MissingModule("print('ModuleNotFoundError')\nImportError: cannot import name 'x'\n"); got != "" {
		t.Errorf("MissingModule of no such error = %q", got)
	}
}

// The programs a script runs by name are found where scripts name them:
// for xlsx's recalc, soffice (issue 35).
func TestScriptProgramsPython(t *testing.T) {
	script := writeScript(t, "recalc.py", `import shutil, subprocess, os
if not shutil.which("soffice"):
    print("no LibreOffice")
cmd = ["soffice", "--headless", "--convert-to", "xlsx", path]
subprocess.run(["timeout", "30", "libreoffice"], check=True)
out = subprocess.check_output("pdftotext -layout a.pdf -", shell=True)
os.system("qpdf --check x.pdf")
subprocess.run([sys.executable, "other.py"])
subprocess.run(["./local.sh", "-x"])
parser.add_argument("--output", "-o")
labels = ["alpha", "beta"]
`)
	got := scriptPrograms(script, []string{"python3"})
	want := []string{"soffice", "timeout", "pdftotext", "qpdf"}
	if !slices.Equal(got, want) {
		t.Errorf("scriptPrograms = %q, want %q", got, want)
	}
}

func TestScriptProgramsShell(t *testing.T) {
	script := writeScript(t, "convert.sh", `#!/bin/bash
# soffice is needed: a comment names no command
set -euo pipefail
IN="$1"; OUT=${2:-out.pdf}
log() { echo "$*" >&2; }
if ! command -v soffice >/dev/null; then
  log "install LibreOffice; or not"
  exit 1
fi
case "$IN" in
  *.docx|*.odt) soffice --headless --convert-to pdf "$IN" ;;
  "plain") cat "$IN" | pandoc -o "$OUT" ;;
esac
n=$((n + 1))
for f in a b; do grep -q x "$f" && echo yes; done
cat <<EOF
magick this is text
cat <<EOF
magick this is text
EOF
./local.sh "$OUT"
VAR=1 qpdf --check "$OUT"
log done
`)
	got := scriptPrograms(script, []string{"/bin/bash"})
	want := []string{"soffice", "cat", "pandoc", "grep", "qpdf"}
	if !slices.Equal(got, want) {
		t.Errorf("scriptPrograms = %q, want %q", got, want)
	}
}
