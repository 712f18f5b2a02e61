package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With tools offered on activation, calling a skill's tool before
// skill_activate says to activate it first; an unknown name still gets the
// SDK's answer.
func TestCallBeforeActivateSaysSo(t *testing.T) {
	h := openHost(t)
	cs := connect(t, New(h, Options{ToolsOnActivate: true}))
	ctx := context.Background()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__add", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), `call skill_activate with {"name": "notes"} first`) {
		t.Errorf("call before activation: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "nothing__here", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}
}
