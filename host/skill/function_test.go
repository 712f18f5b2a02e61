package skill

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// functionNameRe is what OpenAI and Anthropic accept as a function name.
var functionNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestNameTools(t *testing.T) {
	long := strings.Repeat("a", 70)
	tools := func(names ...string) []Tool {
		var out []Tool
		for _, n := range names {
			out = append(out, Tool{Name: n})
		}
		return out
	}
	skills := []*Skill{
		{Name: "pdf", Tools: tools("extract")},
		{Name: "release-notes", Tools: tools("draft")},
		{Name: "my skill.v2", Tools: tools("run.v2")},
		{Name: "my_skill_v2", Tools: tools("run_v2")}, // sanitises to the name before
		{Name: "données", Tools: tools("grön")},
		{Name: "", Tools: tools("x")},
		{Name: "dup", Tools: tools("a_b", "a b")}, // the second sanitises to the first
		{Name: long, Tools: tools("one", "two")},
		{Name: long + "b", Tools: tools("tool")},
		{Name: long + "c", Tools: tools("tool")},
		{Name: "skills", Tools: tools("search")},
		{Name: "taken", Tools: tools("name")},
	}
	taken := map[string]bool{"skills_search": true, "skill_activate": true, "taken__name": true}
	got := NameTools(skills, taken)
	var names []string
	for _, n := range got {
		names = append(names, n.Name)
	}
	want := []string{
		"pdf__extract", "release-notes__draft", "my_skill_v2__run_v2", "my_skill_v2__run_v2_2",
		"donn_es__gr_n", "___x", "dup__a_b", "dup__a_b_2",
	}
	if len(names) != 14 || !slices.Equal(names[:8], want) {
		t.Fatalf("names %q\nwant  %q…", names, want)
	}
	if names[12] != "skills__search" {
		t.Errorf("skills/search: %q", names[12])
	}
	if names[13] != "taken__name_2" {
		t.Errorf("a taken name was reused: %q", names[13])
	}
	seen := maps.Clone(taken)
	for i, n := range got {
		if !functionNameRe.MatchString(n.Name) {
			t.Errorf("name %d %q is not a valid function name", i, n.Name)
		}
		if seen[n.Name] {
			t.Errorf("name %d %q is not unique", i, n.Name)
		}
		seen[n.Name] = true
	}
	// Long names are cut to the limit, keep their start and differ.
	for _, i := range []int{8, 9, 10, 11} {
		if !strings.HasPrefix(names[i], "aaaa") || len(names[i]) != MaxFunctionName {
			t.Errorf("long name %q", names[i])
		}
	}
	if got[0].Skill != skills[0] || got[7].Tool.Name != "a b" || got[13].Skill.Name != "taken" {
		t.Error("a name is not paired with its skill and tool")
	}
	// The same input always gives the same names, and the first name of a
	// tool is its FunctionName.
	again := NameTools(skills, taken)
	for i := range got {
		if again[i].Name != got[i].Name {
			t.Errorf("name %d: %q, then %q", i, got[i].Name, again[i].Name)
		}
	}
	if FunctionName(long+"b", "tool") != names[10] || FunctionName("dup", "a b") != "dup__a_b" {
		t.Error("FunctionName differs from NameTools' first choice")
	}
	if taken["x"] || len(taken) != 3 {
		t.Error("NameTools changed taken")
	}
}

// A collision between long names still fits the limit, and the suffix
// follows the hash rather than replacing it.
func TestNameToolsLongCollision(t *testing.T) {
	long := strings.Repeat("s", 80)
	skills := []*Skill{{Name: long, Tools: []Tool{{Name: "x"}}}}
	first := FunctionName(long, "x")
	got := NameTools(skills, map[string]bool{first: true})
	if len(got) != 1 {
		t.Fatalf("got %v", got)
	}
	hash := first[MaxFunctionName-9:] // "_" and 8 hex digits
	if want := first[:MaxFunctionName-11] + hash + "_2"; got[0].Name != want {
		t.Errorf("%q, want %q", got[0].Name, want)
	}
}

func FuzzFunctionName(f *testing.F) {
	f.Add("pdf", "extract")
	f.Add("données", "grön")
	f.Add("", "")
	f.Add(strings.Repeat("x", 100), "y")
	f.Fuzz(func(t *testing.T, skillName, toolName string) {
		n := FunctionName(skillName, toolName)
		if !functionNameRe.MatchString(n) {
			t.Errorf("FunctionName(%q, %q) = %q", skillName, toolName, n)
		}
	})
}
