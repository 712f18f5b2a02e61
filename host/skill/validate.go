package skill

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/internal/yamlnode"
	"golang.org/x/text/unicode/norm"
)

// Limits from the open Agent Skills specification. Lengths count
// characters (code points), not bytes.
const (
	MaxNameLength          = 64
	MaxDescriptionLength   = 1024
	MaxCompatibilityLength = 500
)

// SpecKeys are the only front-matter keys the specification allows.
var SpecKeys = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}

// Strict checks a parsed skill against the open Agent Skills specification
// and returns one message per violation; none means the skill is valid.
func Strict(s *Skill) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	name := strings.TrimSpace(norm.NFKC.String(s.Name))
	switch n := len([]rune(name)); {
	case n == 0:
		add("name must not be empty")
	case n > MaxNameLength:
		add("name %q is %d characters; at most %d are allowed", name, n, MaxNameLength)
	}
	if strings.ToLower(name) != name {
		add("name %q must be lowercase", name)
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		add("name %q must not start or end with a hyphen", name)
	}
	if strings.Contains(name, "--") {
		add("name %q must not contain two hyphens in a row", name)
	}
	if strings.IndexFunc(name, func(r rune) bool { return r != '-' && !unicode.IsLetter(r) && !unicode.IsNumber(r) }) >= 0 {
		add("name %q may contain only letters, digits and hyphens", name)
	}
	if dir := norm.NFKC.String(filepath.Base(s.Dir)); dir != name {
		add("name %q must equal the directory name %q", name, dir)
	}

	if n := len([]rune(s.Description)); n > MaxDescriptionLength {
		add("description is %d characters; at most %d are allowed", n, MaxDescriptionLength)
	}

	if n := s.values()["compatibility"]; n != nil {
		if n.Kind != yaml.ScalarNode {
			add("compatibility must be text, not a %s", yamlnode.Kind(n))
		} else if l := len([]rune(n.Value)); l > MaxCompatibilityLength {
			add("compatibility is %d characters; at most %d are allowed", l, MaxCompatibilityLength)
		}
	}
	for _, line := range s.front.repaired {
		add("line %d: a value holding an unquoted ': ' is not valid YAML; quote it", line)
	}
	if n := s.values()["metadata"]; n != nil && !yamlnode.IsNull(n) {
		if n.Kind != yaml.MappingNode {
			add("metadata must be a mapping of keys to text, not a %s", yamlnode.Kind(n))
		} else {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if v := yamlnode.Deref(n.Content[i+1]); v.Kind != yaml.ScalarNode {
					add("metadata.%s must be text, not a %s", n.Content[i].Value, yamlnode.Kind(v))
				}
			}
		}
	}
	if n := s.values()["allowed-tools"]; n != nil && n.Kind == yaml.MappingNode {
		add("allowed-tools must be a space-separated string or a list, not a mapping")
	}

	problems = append(problems, controlProblems(s)...)
	problems = append(problems, s.Escapes...)

	var extra []string
	for _, k := range s.Keys {
		if !slices.Contains(SpecKeys, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		add("unexpected front-matter keys: %s (the specification allows only %s)",
			strings.Join(extra, ", "), strings.Join(SpecKeys, ", "))
	}
	var own []string
	for _, k := range extra {
		if slices.Contains(CapabilityKeys, k) {
			own = append(own, k)
		}
	}
	if len(own) > 0 {
		add("%s: skillhost's own front-matter %s, an extension of the specification: skillhost reads %s, other agents ignore %s and strict validators reject %s; "+
			"to stay portable, leave %s out of SKILL.md and grant the same in skillhost's configuration (skills.grants.%s)",
			strings.Join(own, ", "), plural(len(own), "key", "keys"), them(len(own)), them(len(own)), them(len(own)), them(len(own)), s.Name)
	}
	return problems
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func them(n int) string { return plural(n, "it", "them") }
