package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that did not declare roots is never sent roots/list: it could
// not answer, and its first tool call would wait rootsTimeout. The call
// runs at once, with no roots.
func TestClientWithoutRootsIsNotAsked(t *testing.T) {
	h := &writingHost{cat: openHost(t).cat}
	s := New(h, Options{Workspace: "read-write", Home: fakeHome(t)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.mcp.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(id any, method string, params any) {
		t.Helper()
		raw, _ := json.Marshal(params)
		msg := &jsonrpc.Request{Method: method, Params: raw}
		if id != nil {
			var err error
			if msg.ID, err = jsonrpc.MakeID(id); err != nil {
				t.Fatal(err)
			}
		}
		if err := conn.Write(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	// The reply to request id, failing on any request the server sends.
	reply := func(id int64) *jsonrpc.Response {
		t.Helper()
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for reply %d: %v", id, err)
			}
			switch m := msg.(type) {
			case *jsonrpc.Request:
				if m.IsCall() {
					t.Fatalf("the server sent %s to a client that declared no roots", m.Method)
				}
			case *jsonrpc.Response:
				if m.ID.Raw() == id {
					return m
				}
			}
		}
	}
	send(1.0, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bare", "version": "1"}})
	reply(1)
	send(nil, "notifications/initialized", map[string]any{})
	send(2.0, "tools/call", map[string]any{"name": "notes__add", "arguments": map[string]any{}})
	res := reply(2)
	var result mcp.CallToolResult
	if res.Error != nil || json.Unmarshal(res.Result, &result) != nil {
		t.Fatalf("the call failed: %v %s", res.Error, res.Result)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.calls) != 1 || len(h.calls[0].Roots) != 0 {
		t.Errorf("runs %+v, want one, without roots (result %q)", h.calls, resultText(&result))
	}
}
