package host

import (
	"fmt"

	"github.com/skillhost/skillhost/host/skill"
)

// Function is a tool as an agent calls it.
type Function struct {
	// Name is skill.FunctionName, with a numbered suffix where two tools
	// of the set would otherwise share it (skill.NameTools): unique among
	// the set's functions, valid in the common LLM APIs.
	Name string `json:"name"`
	// Skill and Tool say what to run.
	Skill       string         `json:"skill"`
	Tool        string         `json:"tool"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Functions returns the tools of skills as functions, with names unique
// across them (a rare collision after sanitising gets a numbered suffix;
// see skill.NameTools).
func Functions(skills []*skill.Skill) []Function {
	var out []Function
	for _, n := range skill.NameTools(skills, nil) {
		out = append(out, Function{Name: n.Name, Skill: n.Skill.Name, Tool: n.Tool.Name,
			Description: fmt.Sprintf("%s (tool %s of skill %s)", n.Tool.Description, n.Tool.Name, n.Skill.Name),
			Parameters:  n.Tool.Parameters()})
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
