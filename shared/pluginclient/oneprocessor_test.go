package pluginclient

import (
	"slices"
	"strings"
	"testing"
)

// A binary for one-shot hosts gets GOMAXPROCS=1 unless the host's
// environment for plugins gives GOMAXPROCS a value the runtime takes.
func TestOneProcessor(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "GOMAXPROCS=1"},
		{[]string{"PATH=/bin"}, "PATH=/bin GOMAXPROCS=1"},
		{[]string{"GOMAXPROCS=4", "PATH=/bin"}, "GOMAXPROCS=4 PATH=/bin"},
		{[]string{"GOMAXPROCS=0"}, "GOMAXPROCS=0 GOMAXPROCS=1"},
		{[]string{"GOMAXPROCS=four"}, "GOMAXPROCS=four GOMAXPROCS=1"},
	} {
		env := slices.Clone(tc.env)
		if got := strings.Join(oneProcessor(env), " "); got != tc.want {
			t.Errorf("oneProcessor(%q) = %q, want %q", tc.env, got, tc.want)
		}
		if !slices.Equal(env, tc.env) {
			t.Errorf("oneProcessor changed its argument to %q", env)
		}
	}
}
