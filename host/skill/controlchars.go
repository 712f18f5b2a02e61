package skill

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unprintable reports whether r would act on a terminal rather than show:
// C0 and C1 controls (ESC starts colour, title and screen-clearing
// sequences), DEL, and the bidirectional overrides that reorder what is
// shown. Tab and newline are text.
func Unprintable(r rune) bool {
	if r == '\t' || r == '\n' {
		return false
	}
	return unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// Printable returns s with every unprintable rune (see Unprintable) and
// every byte that is not UTF-8 written as a Go-style escape (\x1b,
// \u202e, \xff), so a skill's name or description printed on a terminal
// shows what it holds instead of acting on the terminal. Text without such
// runes is returned unchanged.
func Printable(s string) string {
	if strings.IndexFunc(s, Unprintable) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Unprintable(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unprintable(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// controlProblems lists the fields of s that hold unprintable runes, for
// strict validation.
func controlProblems(s *Skill) []string {
	var out []string
	check := func(field, v string) {
		if strings.IndexFunc(v, Unprintable) >= 0 || !utf8.ValidString(v) {
			out = append(out, fmt.Sprintf("%s holds control characters or bytes that are not UTF-8 (%s); terminals would act on them", field, Printable(v)))
		}
	}
	check("name", s.Name)
	check("description", s.Description)
	for _, t := range s.Tools {
		check("tool "+Printable(t.Name)+" description", t.Description)
	}
	return out
}
