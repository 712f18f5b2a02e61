package host

import (
	"regexp"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/skill"
)

var functionNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestFunctionNames(t *testing.T) {
	long := strings.Repeat("s", 60)
	skills := []*skill.Skill{
		{Name: "release-notes", Tools: []skill.Tool{{Name: "draft"}}},
		{Name: "my skill.v2", Tools: []skill.Tool{{Name: "run"}}},
		{Name: "my_skill_v2", Tools: []skill.Tool{{Name: "run"}}}, // sanitises to the same name
		{Name: long + "a", Tools: []skill.Tool{{Name: "tool"}}},
		{Name: long + "b", Tools: []skill.Tool{{Name: "tool"}}},
	}
	fns := Functions(skills)
	seen := map[string]bool{}
	for _, f := range fns {
		if !functionNameRe.MatchString(f.Name) {
			t.Errorf("%q is not a valid function name", f.Name)
		}
		if seen[f.Name] {
			t.Errorf("%q is not unique", f.Name)
		}
		seen[f.Name] = true
	}
	if fns[0].Name != "release-notes__draft" || fns[1].Name != "my_skill_v2__run" || fns[2].Name != "my_skill_v2__run_2" {
		t.Errorf("names = %q %q %q", fns[0].Name, fns[1].Name, fns[2].Name)
	}
}
