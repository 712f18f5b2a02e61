package skill

import (
	"path/filepath"
	"strings"
	"testing"
)

// A YAML error names the line of SKILL.md it is on, for the parser's
// errors too, which the YAML library numbers from 0 (issue 35).
func TestYAMLErrorLines(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"unclosed flow sequence", "---\nname: x\ndescription: [unclosed\n---\n", "line 3: did not find expected ',' or ']'"},
		{"unclosed flow mapping", "---\nname: x\ndescription: y\nmetadata: {a: 1\n---\n", "line 4: did not find expected ',' or '}'"},
		{"bad indentation", "---\nname: x\ndescription: y\nmetadata:\n  a: b\n c: d\n---\n", "line 6: did not find expected key"},
		{"list in a mapping", "---\n- a\nb: c\n---\n", "line 3: did not find expected '-' indicator"},
		{"after blank lines", "\n\n---\nname: x\ndescription: y\nmetadata: {a: 1\n---\n", "line 6: did not find expected ',' or '}'"},
		{"scanner error", "---\nname: x\ndescription: y\nkey: @foo\n---\n", "line 4: found character that cannot start any token"},
		{"tab", "\ufeff---\r\nname: x\r\ndescription: y\r\nmetadata:\r\n\tauthor: z\r\n---\r\n", "line 5: found character that cannot start any token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x")
			writeFile(t, filepath.Join(dir, FileName), tt.content, 0o644)
			_, err := Parse(dir)
			if err == nil || !strings.HasSuffix(err.Error(), "invalid YAML front matter: "+tt.want) {
				t.Errorf("err = %v, want it to end %q", err, tt.want)
			}
		})
	}
}
