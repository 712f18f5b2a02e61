package host

import (
	"context"
	"fmt"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/changeset"
	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/host/mcpserver"
)

// MCPServer builds an MCP server over the host's catalog: every script tool
// of every skill, run as Run runs it, plus skills_search and
// skill_activate, and the skills' files as resources. An empty
// opts.Version is the host's Version, nil opts.WorkspaceRoots the
// configuration's mcp.workspace_roots, and an empty opts.Home the host's
// home directory. Serve it with its Run (any MCP transport) or ServeHTTP;
// Watch picks up skills changed on disk.
func (h *Host) MCPServer(opts mcpserver.Options) *mcpserver.Server {
	if opts.Version == "" {
		opts.Version = Version
	}
	if opts.WorkspaceRoots == nil && h.Config != nil {
		opts.WorkspaceRoots = h.Config.MCP.WorkspaceRoots
	}
	if opts.Home == "" {
		opts.Home = h.env.Home
	}
	return mcpserver.New(mcpHost{h}, opts)
}

// mcpHost gives the MCP server what it needs of a Host.
type mcpHost struct{ h *Host }

func (m mcpHost) Catalog() *catalog.Catalog { return m.h.Catalog }

func (m mcpHost) Search(ctx context.Context, query string, limit int) ([]match.Match, float64, error) {
	return m.h.Search(ctx, query, limit)
}

func (m mcpHost) RunTool(ctx context.Context, call mcpserver.ToolCall, output func(string) error) (*mcpserver.ToolResult, error) {
	req := RunRequest{Skill: call.Skill, Tool: call.Tool, Args: call.Argv, ArgString: call.ArgString, Strategy: call.Strategy,
		Workspace: call.Workspace, WorkspaceDirs: call.Roots}
	if call.Review != nil {
		req.Review = func(ctx context.Context, run string, cs []changeset.Change) bool {
			return call.Review(ctx, run, changesSummary(run, cs))
		}
	}
	var publish events.PublishFunc
	if output != nil {
		publish = func(e events.Event) error {
			if d, ok := e.Data.(OutputDelta); ok {
				return output(d.Delta)
			}
			return nil
		}
	}
	res, err := m.h.Run(ctx, req, publish)
	if err != nil {
		return nil, err
	}
	return &mcpserver.ToolResult{Text: res.Text(), Failed: !res.OK(), Structured: *res}, nil
}

func (m mcpHost) ApplyKept(run string) (string, error) {
	rep, err := m.h.ApplyKept(run, nil)
	if err != nil {
		return "", err
	}
	line := fmt.Sprintf("[skillhost applied %s of the run's changes", plural(len(rep.Applied), "path", "paths"))
	if n := len(rep.Refused) + len(rep.Conflicts); n > 0 {
		line += fmt.Sprintf("; %d not (protected or changed meanwhile): skillhost changes show %s", n, run)
	}
	return line + "]", nil
}
