package skill

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillhost/skillhost/host/term"
)

// Unprintable reports whether r would act on a terminal (see
// term.Unprintable).
func Unprintable(r rune) bool { return term.Unprintable(r) }

// Printable makes s safe to show on a terminal (see term.Printable).
func Printable(s string) string { return term.Printable(s) }

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
