package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// MaxFunctionName is the longest tool name the common LLM APIs accept for a
// function (OpenAI and Anthropic: ^[a-zA-Z0-9_-]{1,64}$). MCP clients hand
// tool names on to those APIs, so it bounds MCP tool names as well.
const MaxFunctionName = 64

// FunctionName is the name an agent calls one tool of a skill by, before
// collisions with other tools are resolved: "<skill>__<tool>", with every
// character outside [A-Za-z0-9_-] (including '.' and each non-ASCII
// character) replaced by "_" and an empty part written "_". A name longer
// than MaxFunctionName is cut and ends in "_" and 8 hex digits of a hash of
// the unsanitised names, so long names that differ only past the cut, or
// only in replaced characters, stay distinct. NameTools gives the names
// that are unique across a set of tools.
func FunctionName(skillName, toolName string) string {
	return fitName(skillName, toolName, "")
}

// NamedTool is a tool of a skill under its function name.
type NamedTool struct {
	// Name is unique among the tools named together and valid for the
	// common LLM APIs and MCP.
	Name  string
	Skill *Skill
	Tool  Tool
}

// NameTools names every tool of skills, in the order given, with
// FunctionName. A name already in use, by an earlier tool or in taken (for
// example tools the caller offers besides the skills'), gets the first free
// suffix "_2", "_3", …, still within MaxFunctionName; so the same skills in
// the same order always get the same names.
func NameTools(skills []*Skill, taken map[string]bool) []NamedTool {
	used := make(map[string]bool, len(taken))
	for n := range taken {
		used[n] = true
	}
	var out []NamedTool
	for _, s := range skills {
		for _, t := range s.Tools {
			name := fitName(s.Name, t.Name, "")
			for i := 2; used[name]; i++ {
				name = fitName(s.Name, t.Name, "_"+strconv.Itoa(i))
			}
			used[name] = true
			out = append(out, NamedTool{Name: name, Skill: s, Tool: t})
		}
	}
	return out
}

// fitName returns the sanitised "<skill>__<tool>" followed by suffix,
// shortened to MaxFunctionName with a hash when too long.
func fitName(skillName, toolName, suffix string) string {
	full := functionChars(skillName) + "__" + functionChars(toolName)
	if len(full)+len(suffix) <= MaxFunctionName {
		return full + suffix
	}
	sum := sha256.Sum256([]byte(skillName + "\x00" + toolName))
	tail := "_" + hex.EncodeToString(sum[:4]) + suffix
	return full[:MaxFunctionName-len(tail)] + tail
}

// functionChars replaces each character outside [A-Za-z0-9_-] with "_";
// the result is ASCII, so it can be cut at any byte.
func functionChars(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
