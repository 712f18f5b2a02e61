package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrictAgainstEdgeCases compares strict validation with the verdicts of
// the specification's reference validator (skills-ref 0.1.0) on the shared
// edge cases. Where skillhost differs on purpose, the reason is given.
func TestStrictAgainstEdgeCases(t *testing.T) {
	const root = "../../testdata/edge-cases"
	tests := []struct {
		dir       string
		refValid  bool   // skills-ref validate exit 0
		ourValid  bool   // skillhost validate --strict
		wantIssue string // part of our message when invalid
		why       string // reason for a deliberate difference
	}{
		{dir: "123", refValid: true, ourValid: true},
		{dir: "Upper-Case", wantIssue: "must be lowercase"},
		{dir: strings.Repeat("a", 65), wantIssue: "65 characters"},
		{dir: "bom-skill", ourValid: true, why: "a UTF-8 BOM is an encoding artefact, not a missing front matter"},
		{dir: "bool-desc", refValid: true, ourValid: true},
		{dir: "colon-unquoted", wantIssue: "unquoted ': '"},
		{dir: "compat-long", wantIssue: "compatibility is 501 characters"},
		{dir: "crlf-skill", refValid: true, ourValid: true},
		{dir: "dash-in-desc", refValid: true, ourValid: true},
		{dir: "desc-1024-multibyte", refValid: true, ourValid: true},
		{dir: "dup-keys", wantIssue: "duplicate key 'description'"},
		{dir: "empty-desc", wantIssue: "missing 'description'"},
		{dir: "extra-keys", wantIssue: "unexpected front-matter keys: disable-model-invocation, version"},
		{dir: "flow-list-tools", refValid: true, ourValid: true},
		{dir: "folded-desc", refValid: true, ourValid: true},
		{dir: "four-dash", wantIssue: "no YAML front matter"},
		{dir: "hr-in-body", refValid: true, ourValid: true},
		{dir: "leading-blank", ourValid: true, why: "blank lines before the opening --- carry no meaning"},
		{dir: "literal-desc", refValid: true, ourValid: true},
		{dir: "lowercase-file", refValid: true, ourValid: true},
		{dir: "meta-nonstring", wantIssue: "metadata.tags must be text"},
		{dir: "no-desc", wantIssue: "missing 'description'"},
		{dir: "no-frontmatter", wantIssue: "no YAML front matter"},
		{dir: "quoted-name", refValid: true, ourValid: true},
		{dir: "tab-indent", wantIssue: "invalid YAML front matter"},
		{dir: "trailing-ws-delim", refValid: true, ourValid: true},
		{dir: "unclosed", wantIssue: "not closed"},
		{dir: "under_score", wantIssue: "only letters, digits and hyphens"},
		{dir: "yaml-comment", refValid: true, ourValid: true},
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.dir] = true
		t.Run(tt.dir, func(t *testing.T) {
			if tt.refValid != tt.ourValid && tt.why == "" {
				t.Fatal("a difference from the reference validator needs a reason")
			}
			var problems []string
			s, err := Parse(filepath.Join(root, tt.dir))
			if err != nil {
				problems = []string{err.Error()}
			} else {
				problems = Strict(s)
			}
			if valid := len(problems) == 0; valid != tt.ourValid {
				t.Fatalf("valid = %v, want %v: %q", valid, tt.ourValid, problems)
			}
			if tt.wantIssue != "" && !strings.Contains(strings.Join(problems, "\n"), tt.wantIssue) {
				t.Errorf("problems %q lack %q", problems, tt.wantIssue)
			}
		})
	}
	for _, e := range entries {
		if e.IsDir() && !covered[e.Name()] {
			t.Errorf("edge case %s has no expected verdict", e.Name())
		}
	}
}

func TestStrictNameRules(t *testing.T) {
	tests := []struct {
		name, dir string
		want      string
	}{
		{"pdf-tools", "pdf-tools", ""},
		{"café", "café", ""},
		{"技能", "技能", ""},
		{"-lead", "-lead", "must not start or end with a hyphen"},
		{"trail-", "trail-", "must not start or end with a hyphen"},
		{"dou--ble", "dou--ble", "two hyphens"},
		{"other", "dir", `must equal the directory name "dir"`},
		{"has space", "has space", "only letters, digits and hyphens"},
		{"ﬁle", "file", ""}, // NFKC folds the ligature on both sides
	}
	for _, tt := range tests {
		dir := filepath.Join(t.TempDir(), tt.dir)
		writeFile(t, filepath.Join(dir, FileName), "---\nname: \""+tt.name+"\"\ndescription: d\n---\n", 0o644)
		s, err := Parse(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(Strict(s), "\n")
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("Strict(name %q in %q) = %q, want %q", tt.name, tt.dir, got, tt.want)
		}
	}
}
