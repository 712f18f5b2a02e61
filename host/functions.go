package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"

	"github.com/skillhost/skillhost/host/skill"
)

// MaxFunctionName is the longest function name the common LLM APIs accept
// (OpenAI and Anthropic: ^[a-zA-Z0-9_-]{1,64}$).
const MaxFunctionName = 64

var notFunctionChar = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// FunctionName names a skill's tool for an LLM API: skill__tool, with any
// character the APIs refuse replaced by _, and, when longer than 64
// characters, cut with a short hash of the full name so that it stays
// unique.
func FunctionName(skillName, toolName string) string {
	full := notFunctionChar.ReplaceAllString(skillName, "_") + "__" + notFunctionChar.ReplaceAllString(toolName, "_")
	if len(full) <= MaxFunctionName {
		return full
	}
	sum := sha256.Sum256([]byte(skillName + "\x00" + toolName))
	return full[:MaxFunctionName-9] + "_" + hex.EncodeToString(sum[:4])
}

// Function is a tool as an agent calls it.
type Function struct {
	// Name is FunctionName: unique, valid in the common LLM APIs.
	Name        string
	Skill, Tool string
	Description string
	Parameters  map[string]any
}

// Functions returns the tools of skills as functions, with names unique
// across them (a rare collision after sanitising gets a numbered suffix).
func Functions(skills []*skill.Skill) []Function {
	var out []Function
	seen := map[string]bool{}
	for _, s := range skills {
		for _, t := range s.Tools {
			name := FunctionName(s.Name, t.Name)
			for i := 2; seen[name]; i++ {
				suffix := fmt.Sprintf("_%d", i)
				name = FunctionName(s.Name, t.Name)
				if len(name)+len(suffix) > MaxFunctionName {
					name = name[:MaxFunctionName-len(suffix)]
				}
				name += suffix
			}
			seen[name] = true
			out = append(out, Function{Name: name, Skill: s.Name, Tool: t.Name,
				Description: fmt.Sprintf("%s (tool %s of skill %s)", t.Description, t.Name, s.Name), Parameters: t.Parameters()})
		}
	}
	return out
}

// Function definition formats for FunctionDefs.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
)

// FunctionDefs renders functions as an API expects them in a request:
// OpenAI's {"type":"function","function":{name,description,parameters}} or
// Anthropic's {name,description,input_schema}.
func FunctionDefs(fns []Function, format string) ([]map[string]any, error) {
	out := []map[string]any{}
	for _, f := range fns {
		switch format {
		case FormatOpenAI:
			out = append(out, map[string]any{"type": "function", "function": map[string]any{
				"name": f.Name, "description": f.Description, "parameters": f.Parameters}})
		case FormatAnthropic:
			out = append(out, map[string]any{"name": f.Name, "description": f.Description, "input_schema": f.Parameters})
		default:
			return nil, &UsageError{fmt.Errorf("--tools: %q is neither %s nor %s", format, FormatOpenAI, FormatAnthropic)}
		}
	}
	return out, nil
}
