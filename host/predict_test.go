package host

import (
	"os"
	"path/filepath"
	"testing"
)

func TestShebangProgram(t *testing.T) {
	bin := t.TempDir()
	py := filepath.Join(bin, "python3")
	if err := os.WriteFile(py, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin}
	for _, tt := range []struct {
		name, head, want string
	}{
		{"absolute", "#!/bin/sh\necho\n", "/bin/sh"},
		{"absolute with argument", "#! /bin/bash -eu\n", "/bin/bash"},
		{"tab before argument", "#!/bin/sh\t-e\n", "/bin/sh"},
		{"carriage return", "#!/bin/sh\r\n", "/bin/sh"},
		{"env looks up on PATH", "#!/usr/bin/env python3\n", py},
		{"env with interpreter arguments", "#!/usr/bin/env python3 -u\n", py},
		{"env name not found", "#!/usr/bin/env nosuchprogram\n", ""},
		{"env -S is env itself", "#!/usr/bin/env -S python3 -u\n", "/usr/bin/env"},
		{"bare env", "#!/usr/bin/env\n", "/usr/bin/env"},
		{"empty", "#!\n", ""},
		{"blank", "#!   \n", ""},
		{"binary", "\x7fELF\x02\x01", ""},
		{"not at the first byte", " #!/bin/sh\n", ""},
		{"byte-order mark: the kernel sees no #!", "\ufeff#!/bin/sh\n", ""},
		{"no newline", "#!/bin/sh", "/bin/sh"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "script")
			if err := os.WriteFile(path, []byte(tt.head), 0o755); err != nil {
				t.Fatal(err)
			}
			if got := shebangProgram(path, env); got != tt.want {
				t.Errorf("shebangProgram(%q) = %q, want %q", tt.head, got, tt.want)
			}
		})
	}
	if got := shebangProgram(filepath.Join(bin, "missing"), env); got != "" {
		t.Errorf("a missing file: %q, want \"\"", got)
	}
}
