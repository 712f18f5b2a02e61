package mcpserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runningHost runs every tool: argv ["fail"] fails, anything else works.
type runningHost struct{ catalogHost }

func (runningHost) RunTool(_ context.Context, c ToolCall, _ func(delta string) error) (*ToolResult, error) {
	if len(c.Argv) == 1 && c.Argv[0] == "fail" {
		return &ToolResult{Text: "failed", Failed: true}, nil
	}
	return &ToolResult{Text: "ran"}, nil
}

// Over HTTP the server serves Prometheus metrics of its tool calls at
// /metrics, behind its bearer token: by tool (names it does not offer
// as one label) and outcome, with durations.
func TestHTTPMetrics(t *testing.T) {
	s := New(runningHost{openHost(t)}, Options{})
	ts := httptest.NewServer(s.Handler("s3cret", HTTPLimits{}))
	defer ts.Close()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	hc := &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, argv := range [][]string{{"a"}, {"b"}, {"fail"}} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__add", Arguments: map[string]any{"argv": argv}}); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil && !res.IsError {
		t.Fatal("an unknown tool was called")
	}

	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d", resp.StatusCode)
	}
	resp, err = hc.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`skillhost_mcp_tool_calls_total{outcome="ok",tool="notes__add"} 2`,
		`skillhost_mcp_tool_calls_total{outcome="failed",tool="notes__add"} 1`,
		`skillhost_mcp_tool_call_duration_seconds_count{tool="notes__add"} 3`,
		`skillhost_mcp_tool_calls_active 0`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
	if !strings.Contains(string(body), `tool="other"`) || strings.Contains(string(body), "no_such_tool") {
		t.Errorf("an unknown tool is not counted as other:\n%s", body)
	}
}
