package skill

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/grant"
)

const fixtures = "../../testdata/skills"

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		dir          string
		name         string
		description  string
		instructions string
		wantErr      string
		wantWarning  string
	}{
		{dir: "test_skill", name: "test_skill", description: "A test skill for verifying AgentSkills.io integration",
			instructions: "You have been enhanced with the test skill. Apply rigorous testing practices."},
		{dir: "bad_skill", wantErr: "missing 'description'"},
		{dir: "no_name_skill", wantErr: "missing 'name'"},
		{dir: "bom_skill", name: "bom_skill", description: "Starts with a UTF-8 byte order mark", instructions: "Body after a BOM."},
		{dir: "crlf_skill", name: "crlf_skill", description: "Written with CRLF line endings", instructions: "Line one.\nLine two."},
		{dir: "trailing_space_delimiter", name: "trailing_space_delimiter", description: "Both delimiters carry trailing blanks", instructions: "Body."},
		{dir: "hr_in_body", name: "hr_in_body", description: "The body has a horizontal rule", instructions: "Part one.\n\n---\n\nPart two."},
		{dir: "dashes_in_value", name: "dashes_in_value", description: "Uses --- as a separator, and --- on its own line", instructions: "Body."},
		{dir: "folded_description", name: "folded_description", description: "Folded multi-line description text.\n", instructions: "Body."},
		{dir: "literal_description", name: "literal_description", description: "Line one\nLine two\n", instructions: "Body."},
		{dir: "flow_lists", name: "flow_lists", description: "Uses flow lists and extra keys", instructions: "Body."},
		{dir: "numeric_name", name: "123", description: "456", instructions: "Body.", wantWarning: `does not match the directory name`},
		{dir: "leading_blank_lines", name: "leading_blank_lines", description: "Blank lines before the opening delimiter", instructions: "Body."},
		{dir: "unquoted_colon", name: "unquoted_colon", description: "Use this skill when: the user asks about PDFs", instructions: "Body.", wantWarning: "line 3: unquoted ': '"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			s, err := Parse(filepath.Join(fixtures, tt.dir))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				abs, _ := filepath.Abs(filepath.Join(fixtures, tt.dir, FileName))
				if !strings.HasPrefix(err.Error(), "SKILL.md at "+abs+" ") {
					t.Errorf("error does not name the file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tt.name || s.Description != tt.description || s.Instructions != tt.instructions {
				t.Errorf("got name=%q description=%q instructions=%q", s.Name, s.Description, s.Instructions)
			}
			if tt.wantWarning != "" && !strings.Contains(strings.Join(s.Warnings, "\n"), tt.wantWarning) {
				t.Errorf("warnings %q lack %q", s.Warnings, tt.wantWarning)
			}
			if tt.wantWarning == "" && len(s.Warnings) > 0 {
				t.Errorf("unexpected warnings: %q", s.Warnings)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{"no front matter", "# Just markdown\n", "has no YAML front matter"},
		{"empty file", "", "has no YAML front matter"},
		{"four dashes", "----\nname: x\ndescription: y\n----\n", "has no YAML front matter"},
		{"unclosed", "---\nname: x\ndescription: y\n", "front matter is not closed"},
		{"bad yaml", "---\nname: x\ndescription: [unclosed\n---\n", "invalid YAML front matter"},
		{"tab indent", "---\nname: x\ndescription: y\nmetadata:\n\tauthor: z\n---\n", "line 5"},
		{"duplicate key", "---\nname: x\ndescription: a\ndescription: b\n---\n", "duplicate key 'description' (lines 3 and 4)"},
		{"list name", "---\nname: [a, b]\ndescription: y\n---\n", "has a list for 'name' on line 2"},
		{"mapping description", "---\nname: x\ndescription:\n  a: b\n---\n", "has a mapping for 'description'"},
		{"blank name", "---\nname: '   '\ndescription: y\n---\n", "missing 'name' (the value is blank)"},
		{"null description", "---\nname: x\ndescription: ~\n---\n", "missing 'description'"},
		{"scalar front matter", "---\njust text\n---\n", "must be a mapping"},
		{"invalid utf8", "---\nname: \xff\ndescription: y\n---\n", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x")
			writeFile(t, filepath.Join(dir, FileName), tt.content, 0o644)
			_, err := Parse(dir)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseLocatesFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lower")
	writeFile(t, filepath.Join(dir, "skill.md"), "---\nname: lower\ndescription: d\n---\n", 0o644)
	s, err := Parse(filepath.Join(dir, "skill.md"))
	if err != nil || s.Name != "lower" {
		t.Fatalf("parse file path: %v", err)
	}
	s, err = Parse(dir)
	if err != nil || !strings.Contains(strings.Join(s.Warnings, ""), "skill.md") {
		t.Fatalf("lowercase skill.md: %v %q", err, s.Warnings)
	}
	if _, err := Parse(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no SKILL.md") {
		t.Fatalf("empty dir: %v", err)
	}
}

func TestParseRejectsHugeFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "big")
	writeFile(t, filepath.Join(dir, FileName), "---\nname: big\ndescription: d\n---\n"+strings.Repeat("x", MaxFileSize), 0o644)
	if _, err := Parse(dir); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v", err)
	}
}

func TestField(t *testing.T) {
	s, err := Parse(filepath.Join(fixtures, "flow_lists"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Field("allowed-tools"); !reflect.DeepEqual(got, []any{"Read", "Grep"}) {
		t.Errorf("allowed-tools = %#v", got)
	}
	if got := s.Field("version"); got != 2 {
		t.Errorf("version = %#v", got)
	}
	if s.Field("absent") != nil {
		t.Error("absent field is not nil")
	}
	if want := []string{"./data", "~/notes"}; !reflect.DeepEqual(s.Declared.FSRead, want) {
		t.Errorf("declared fs_read = %q, want %q", s.Declared.FSRead, want)
	}
	want := []string{"name", "description", "allowed-tools", "fs_read", "metadata", "version", "disable-model-invocation"}
	if !reflect.DeepEqual(s.Keys, want) {
		t.Errorf("Keys = %q", s.Keys)
	}
}

// The capability keys are read once, when the skill is parsed: a value
// that cannot be used becomes the safe default and a declaration warning,
// kept apart from the bundle's warnings (a run reports it with its grant).
func TestParseReadsCapabilitiesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "caps")
	writeFile(t, filepath.Join(dir, FileName), "---\nname: caps\ndescription: d\nfs_write: ./out\nnetwork: [api.example.com]\ntimeout: soon\ntrust: core\n---\n", 0o644)
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := grant.Declared{FSWrite: []string{"./out"}, Network: true, Hosts: []string{"api.example.com"}, Timeout: grant.DefaultTimeout, Trust: grant.TrustCore}
	if !reflect.DeepEqual(s.Declared, want) {
		t.Errorf("Declared = %+v, want %+v", s.Declared, want)
	}
	if len(s.DeclaredWarnings) != 1 || !strings.HasPrefix(s.DeclaredWarnings[0], `timeout: "soon" is not a number of seconds`) {
		t.Errorf("DeclaredWarnings = %q", s.DeclaredWarnings)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("Warnings = %q, want none", s.Warnings)
	}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
