package skill

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite testdata/shapes.golden")

func TestPythonSource(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      pyVerdict
	}{
		{"a main guard", "import sys\n\ndef main():\n    pass\n\nif __name__ == \"__main__\":\n    main()\n", pyRunnable},
		{"a guard that refuses", "\"\"\"Validator.\"\"\"\nimport re\n\nclass V:\n    pass\n\nif __name__ == \"__main__\":\n    raise RuntimeError(\"This module should not be run directly.\")\n", pyRefuses},
		{"a guard that exits with a message", "def f(): pass\nif __name__ == '__main__':\n    sys.exit('import me')\n", pyRefuses},
		{"a guard that exits 1 after a usage line", "if __name__ == '__main__':\n    print('usage: import me', file=sys.stderr)\n    sys.exit(1)\n", pyRefuses},
		{"a guard that exits 0", "if __name__ == '__main__':\n    sys.exit(0)\n", pyRunnable},
		{"a guard that exits with main's status", "def main(): return 0\nif __name__ == '__main__':\n    sys.exit(main())\n", pyRunnable},
		{"a guard that prints without exiting", "if __name__ == '__main__':\n    print('hello')\n", pyRunnable},
		{"a raise after a statement that runs", "if __name__ == '__main__':\n    main()\n    raise SystemExit(1)\n", pyRunnable},
		{"definitions only", "\"\"\"Connections.\"\"\"\n\nfrom abc import ABC\nX: int = 3\nNAMES = [\n    'a',\n    'b(',\n]\n\nclass C(ABC):\n    def f(self):\n        return 1\n\n@decorator\ndef g():\n    '''doc\n\nmain()\n'''\n", pyLibrary},
		{"a top-level call", "import sys\nprint(sys.argv)\n", pyRunnable},
		{"a top-level loop", "import os\nfor f in os.listdir('.'):\n    print(f)\n", pyRunnable},
		{"optional imports are a try", "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n", pyRunnable},
		{"an assignment from a call", "X = dict(\n    a=1,\n)\n", pyRunnable},
		{"a subscript", "X = ENV['HOME']\n", pyRunnable},
		{"a constant expression", "X = (1 << 20) * 2\nY = -X\nZ = {'a': [1, 2], 'b': (3,)}\nW = os.sep + 'x'\n", pyLibrary},
		{"a comparison is not an assignment", "x == 1\n", pyRunnable},
		{"an annotation alone", "X: int\n", pyLibrary},
		{"a conditional expression", "X = 1 if Y else 2\n", pyRunnable},
		{"a stub guard may be filled in", "def f(): pass\nif __name__ == '__main__':\n    pass\n", pyRunnable},
		{"a guard that runs after a comment", "if __name__ == \"__main__\":\n    # comment\n    main()\n", pyRunnable},
		{"a string with a hash and brackets", "X = '# ( ['\ndef f(): pass\n", pyLibrary},
		{"an escaped quote", "X = 'it\\'s'\n", pyLibrary},
		{"a raw string ending in a backslash pair", "X = r'\\\\'\n", pyLibrary},
		{"a docstring method call", "\"\"\"doc\"\"\".strip()\n", pyRunnable},
		{"an unterminated string", "X = 'a\n", pyRunnable},
		{"an unmatched bracket", "X = 1)\n", pyRunnable},
		{"an unexpected indent", "import os\n  import sys\n", pyRunnable},
		{"a one-line def then an indented line", "def f(): pass\n    x = 1\n", pyRunnable},
		{"a def without a colon", "def f()\n", pyRunnable},
		{"a stray backslash", "X = 1 \\ 2\n", pyRunnable},
		{"a NUL byte", "def f(): pass\n\x00", pyRunnable},
		{"invalid UTF-8", "X = '\xff'\n", pyRunnable},
		{"invalid UTF-8 under a latin-1 cookie", "# coding=latin-1\nX = '\xff'\n", pyLibrary},
		{"a BOM", "\ufeffimport os\n", pyLibrary},
		{"empty", "", pyLibrary},
	} {
		if got := pythonSource([]byte(c.src)); got != c.want {
			t.Errorf("%s: verdict %v, want %v", c.name, got, c.want)
		}
	}
}

// TestScriptShapes loads each shape of testdata/shapes.txtar as a skill of
// its own and compares every file's verdict (a tool, or not and why) with
// testdata/shapes.golden. With python3 on PATH, every Python file judged a
// library must also compile: a syntax error is never dropped as one.
func TestScriptShapes(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "shapes.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var shapes []string
	for _, f := range ar.Files {
		name, exec := strings.CutSuffix(f.Name, " +x")
		shape, rel, ok := strings.Cut(name, "/")
		if !ok {
			t.Fatalf("%s: no SHAPE/ prefix", f.Name)
		}
		dir := filepath.Join(root, shape)
		if _, err := os.Stat(dir); err != nil {
			shapes = append(shapes, shape)
			writeFile(t, filepath.Join(dir, FileName), "---\nname: "+shape+"\ndescription: d\n---\n", 0o644)
		}
		mode := os.FileMode(0o644)
		if exec {
			mode = 0o755
		}
		writeFile(t, filepath.Join(dir, "scripts", rel), string(f.Data), mode)
	}
	python, _ := exec.LookPath("python3")
	var out bytes.Buffer
	for _, shape := range shapes {
		s, err := Parse(filepath.Join(root, shape))
		if err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		var lines []string
		for _, tool := range s.Tools {
			lines = append(lines, fmt.Sprintf("%s/%s: tool %s", shape, strings.TrimPrefix(tool.Rel, "scripts/"), tool.Name))
		}
		for _, n := range s.NotTools {
			warned := ""
			if n.Warned {
				warned = " (warning)"
			}
			lines = append(lines, fmt.Sprintf("%s/%s: not a tool%s: %s", shape, strings.TrimPrefix(n.Rel, "scripts/"), warned, n.Reason))
			if python != "" && (n.Reason == reasonLibrary || n.Reason == reasonRefuses) {
				path := filepath.Join(s.Dir, n.Rel)
				if msg, err := exec.Command(python, "-c", "import sys; compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')", path).CombinedOutput(); err != nil {
					t.Errorf("%s/%s is judged a library but Python does not compile it: %s", shape, n.Rel, msg)
				}
			}
		}
		sort.Strings(lines)
		for _, l := range lines {
			fmt.Fprintln(&out, l)
		}
	}
	golden := filepath.Join("testdata", "shapes.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestScriptShapes -update writes it)", err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("verdicts differ from %s (go test -run TestScriptShapes -update rewrites it):\n%s", golden, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// FuzzPythonSource feeds arbitrary text to the Python check, seeded with
// the shapes corpus: it must not panic, and must not take long.
func FuzzPythonSource(f *testing.F) {
	if ar, err := txtar.ParseFile(filepath.Join("testdata", "shapes.txtar")); err == nil {
		for _, file := range ar.Files {
			f.Add(file.Data)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		pythonSource(src)
	})
}
