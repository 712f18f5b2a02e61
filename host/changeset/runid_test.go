package changeset

import (
	"regexp"
	"strings"
	"testing"
)

// isRunID accepts what the pattern ^[A-Za-z0-9_-]{1,64}$ accepts, and
// nothing else.
func TestIsRunID(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, s := range []string{
		"", "a", "run-1_Z9", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"a/b", "..", ".", "a.b", "a b", "a\n", "\na", "é", "run\x00", "A-Z_a-z_0-9",
	} {
		if got, want := isRunID(s), re.MatchString(s); got != want {
			t.Errorf("isRunID(%q) = %v, want %v", s, got, want)
		}
	}
}
