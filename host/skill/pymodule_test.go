package skill

import "testing"

func TestRunnableSource(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"a main guard", "import sys\n\ndef main():\n    pass\n\nif __name__ == \"__main__\":\n    main()\n", true},
		{"a guard that refuses", "\"\"\"Validator.\"\"\"\nimport re\n\nclass V:\n    pass\n\nif __name__ == \"__main__\":\n    raise RuntimeError(\"This module should not be run directly.\")\n", false},
		{"a guard that exits with a message", "def f(): pass\nif __name__ == '__main__':\n    sys.exit('import me')\n", false},
		{"definitions only", "\"\"\"Connections.\"\"\"\n\nfrom abc import ABC\nX: int = 3\nNAMES = [\n    'a',\n    'b(',\n]\n\nclass C(ABC):\n    def f(self):\n        return 1\n\n@decorator\ndef g():\n    '''doc\n\nmain()\n'''\n", false},
		{"a top-level call", "import sys\nprint(sys.argv)\n", true},
		{"a top-level loop", "import os\nfor f in os.listdir('.'):\n    print(f)\n", true},
		{"optional imports", "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n", false},
		{"a call in a continued expression is not top level", "X = dict(\n    a=1,\n)\n", false},
		{"a comparison is not an assignment", "x == 1\n", true},
		{"a stub guard may be filled in", "def f(): pass\nif __name__ == '__main__':\n    pass\n", true},
		{"a guard that runs after a docstring line", "if __name__ == \"__main__\":\n    # comment\n    main()\n", true},
	} {
		if got := runnableSource([]byte(c.src)); got != c.want {
			t.Errorf("%s: runnable %v, want %v", c.name, got, c.want)
		}
	}
}
