package host

import (
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/skill"
)

// The catalog's one warning line counts the code under scripts/ that is
// not a tool, warned or not (issue 35, part 1); data files are not counted.
func TestSummaryCountsCodeNotTools(t *testing.T) {
	lib := &skill.Skill{Name: "a", NotTools: []skill.NotTool{
		{Rel: "scripts/helpers.py", Reason: "a Python library (its top level only imports, defines and assigns constants)"},
		{Rel: "scripts/schema.xsd", Reason: "a data file (.xsd)"},
	}}
	warned := &skill.Skill{Name: "b", Skipped: 1, Warnings: []string{"scripts/x.py: not executable, skipping"},
		NotTools: []skill.NotTool{{Rel: "scripts/x.py", Reason: "not executable", Warned: true}}}
	for _, tc := range []struct {
		skills []*skill.Skill
		want   string
	}{
		{[]*skill.Skill{lib}, "1 code file under scripts/ is not a tool"},
		{[]*skill.Skill{warned}, "1 skill has 1 warning (1 script not tools)"},
		{[]*skill.Skill{lib, warned}, "1 skill has 1 warning (1 script not tools); 1 code file under scripts/ is not a tool"},
	} {
		got := summary(tc.skills, nil)
		if !strings.Contains(got, tc.want) {
			t.Errorf("summary = %q, want it to contain %q", got, tc.want)
		}
	}
	if got := summary([]*skill.Skill{{Name: "c", NotTools: []skill.NotTool{{Rel: "scripts/s.xsd", Reason: "a data file (.xsd)"}}}}, nil); got != "" {
		t.Errorf("data files alone: %q", got)
	}
}
