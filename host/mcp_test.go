package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	if s := h.MCPServer(mcpserver.Options{DisclosureOnly: true}); len(s.ToolNames()) != 0 {
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

// MCP client roots are clamped (issue 34, item 7): with --workspace
// read-write, a client whose root is <home>/.ssh has the call refused and
// nothing is written there, while a project directory in home (inside the
// default mcp.workspace_roots) is the run's workspace. The run is real:
// the script appends to authorized_keys in its working directory.
func TestMCPClientRootsClamped(t *testing.T) {
	noUserConfig(t)
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SKILLHOST_MCP__WORKSPACE_ROOTS", "")
	ssh, proj := filepath.Join(home, ".ssh"), filepath.Join(home, "proj")
	for _, d := range []string{ssh, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	skills := t.TempDir()
	testskill.Write(t, filepath.Join(skills, "keys"), testskill.FrontMatter("Keys.\n", "name: keys", "description: Append a key"),
		map[string]string{"scripts/append.sh": "#!/bin/sh\necho 'ssh-ed25519 AAAA attacker' >> authorized_keys\necho appended\n"})
	h, err := Open(Options{SkillRoots: []string{skills}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := h.MCPServer(mcpserver.Options{Workspace: "read-write", Strategy: InProcessName})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	go srv.Run(ctx, st)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file://" + ssh})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func() (bool, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "keys__append", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return res.IsError, b.String()
	}
	if isErr, text := call(); !isErr || !strings.Contains(text, ssh) || !strings.Contains(text, "mcp.workspace_roots") {
		t.Errorf("a root of ~/.ssh: isError %v, %q", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(ssh, "authorized_keys")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("authorized_keys written in ~/.ssh: %v", err)
	}
	client.RemoveRoots("file://" + ssh)
	client.AddRoots(&mcp.Root{URI: "file://" + proj})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		isErr, text := call()
		if !isErr && strings.Contains(text, "appended") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the project root: isError %v, %q", isErr, text)
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "authorized_keys")); err != nil {
		t.Errorf("the allowed root was not the workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ssh, "authorized_keys")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("authorized_keys written in ~/.ssh: %v", err)
	}
}
