package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/internal/testskill"
)

// mcp --review asks through elicitation before a run's changes are
// applied: a yes applies them, a no keeps them, and a client that cannot
// elicit has them kept.
func TestMCPReviewElicits(t *testing.T) {
	pluginDir := plugins(t)
	if !landlockWorks(pluginDir) {
		t.Skip("the Landlock plugin cannot confine here")
	}
	bin, _ := skillhostBinary(t)
	skills := t.TempDir()
	testskill.Add(t, skills, "writer", testskill.Skill{Name: "writer", Description: "test skill writer", Body: "# writer\n", Scripts: map[string]string{"write.sh": "#!/bin/sh\necho made > made.txt\necho done\n"}})
	for _, tc := range []struct {
		name    string
		answer  *mcp.ElicitResult // nil: the client cannot elicit
		applied bool
	}{
		{"yes", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"apply": true}}, true},
		{"no", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"apply": false}}, false},
		{"declined", &mcp.ElicitResult{Action: "decline"}, false},
		{"cannot ask", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var asked string
			opts := &mcp.ClientOptions{}
			if tc.answer != nil {
				opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = req.Params.Message
					return tc.answer, nil
				}
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "review-test", Version: "1"}, opts)
			client.AddRoots(&mcp.Root{URI: "file://" + root, Name: "project"})
			cmd := exec.Command(bin, "--skills", skills, "mcp", "--strategy", "landlock", "--tools", "all", "--workspace", "read-write", "--review")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+pluginDir, "SKILLHOST_SANDBOX__ENABLED=true",
				"SKILLHOST_MCP__WORKSPACE_ROOTS="+filepath.Dir(root), "XDG_STATE_HOME="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, &stderr)
			}
			defer session.Close()
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "writer__write", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("call: %v\n%s", err, &stderr)
			}
			_, statErr := os.Stat(filepath.Join(root, "made.txt"))
			if got := statErr == nil; got != tc.applied {
				t.Errorf("applied %v, want %v\n%s\n%s", got, tc.applied, text(res), &stderr)
			}
			if tc.answer != nil && !strings.Contains(asked, "made.txt") {
				t.Errorf("the question does not name the change: %q", asked)
			}
			if !tc.applied && !strings.Contains(text(res), "skillhost changes apply") {
				t.Errorf("the result does not say the changes were kept: %q", text(res))
			}
		})
	}
}
