package host

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/mcpserver"
	"github.com/skillhost/skillhost/internal/testskill"
)

// The MCP server runs tools through Run: same text, same failure verdict,
// and a structured result naming the skill and tool.
func TestMCPHostRunTool(t *testing.T) {
	noUserConfig(t)
	h, err := Open(Options{SkillRoots: []string{"../examples/skills"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	m := mcpHost{h}
	if m.Catalog() != h.Catalog {
		t.Error("the server sees another catalog")
	}
	ctx := context.Background()
	tests := []struct {
		argv   []string
		failed bool
		text   string
	}{
		{[]string{"../examples/data/article.txt"}, false, "60 words"},
		{[]string{"../examples/data/no-such-file.txt"}, true, "Error (exit "},
	}
	for _, tt := range tests {
		res, err := m.RunTool(ctx, mcpserver.ToolCall{Skill: "text-stats", Tool: "count", Argv: tt.argv, Strategy: InProcessName}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != tt.failed || !strings.Contains(res.Text, tt.text) {
			t.Errorf("%v: failed %v, text %q", tt.argv, res.Failed, res.Text)
		}
		rep, ok := res.Structured.(RunReport)
		if !ok || rep.Skill != "text-stats" || rep.Tool != "count" || rep.Strategy != InProcessName {
			t.Errorf("structured %#v", res.Structured)
		}
	}
	if _, err := m.RunTool(ctx, mcpserver.ToolCall{Skill: "nope", Tool: "x"}, nil); ExitStatus(err) != ExitUsage {
		t.Errorf("an unknown skill: %v", err)
	}
	if s := h.MCPServer(MCPOptions{DisclosureOnly: true}); len(s.ToolNames()) != 0 {
		t.Errorf("disclosure only offers %v", s.ToolNames())
	}
}

// skills_search ranks candidates, tool descriptions included, and returns
// them with their scores even below the threshold of automatic activation
// (issue 29, point 8).
func TestSearchListsCandidates(t *testing.T) {
	noUserConfig(t)
	root := t.TempDir()
	testskill.Write(t, filepath.Join(root, "kit"), testskill.FrontMatter("Small utilities.\n", "name: kit", "description: Assorted small utilities"),
		map[string]string{"scripts/hello.sh": "#!/bin/sh\n# Say hello to the world\necho hello\n"})
	testskill.Write(t, filepath.Join(root, "ledger"), testskill.FrontMatter("Accounts.\n", "name: ledger", "description: Balance the books"), nil)
	h, err := Open(Options{SkillRoots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hits, threshold, err := mcpHost{h}.Search(context.Background(), "say hello to the world", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Skill.Name != "kit" || hits[0].Score <= 0 {
		t.Fatalf("search: %+v (threshold %v)", hits, threshold)
	}
	for _, m := range hits {
		if m.Skill.Name == "ledger" {
			t.Errorf("a skill with no evidence is listed: %+v", m)
		}
	}
}
