package skill

import (
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, tabs\tand\nnewlines", "plain text, tabs\tand\nnewlines"},
		{"clear\x1b[2Jscreen", `clear\x1b[2Jscreen`},
		{"title\x1b]0;pwned\x07", `title\x1b]0;pwned\x07`},
		{"c1 \u009b31m", `c1 \x9b31m`},
		{"rtl \u202eevil", `rtl \u202eevil`},
		{"bad \xff byte", `bad \xff byte`},
		{"café ✓", "café ✓"},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStrictFlagsControlCharacters(t *testing.T) {
	s := &Skill{Name: "ok", Description: "looks fine\x1b[2J", Tools: []Tool{{Name: "t", Description: "\x1b]0;title\x07"}}}
	got := strings.Join(controlProblems(s), "\n")
	for _, want := range []string{`description holds control characters or bytes that are not UTF-8 (looks fine\x1b[2J)`, `tool t description holds`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
	if p := controlProblems(&Skill{Name: "ok", Description: "multi\nline\ttext"}); len(p) != 0 {
		t.Errorf("plain text flagged: %q", p)
	}
}
