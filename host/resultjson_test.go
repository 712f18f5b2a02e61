package host

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/mcpserver"
	"github.com/skillhost/skillhost/shared"
)

func TestRunReportJSON(t *testing.T) {
	g := grant.Grant{Timeout: 2 * time.Second, Trust: "external"}
	grantJSON, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		res  *RunReport
		want string
	}{
		{
			name: "empty lists are [], not null",
			res:  &RunReport{Grant: g, Strategy: "null", Output: "a < b && c\n", ExitCode: 3, DurationMS: 1500},
			want: `{"skill":"","tool":"","output":"a < b && c\n","exit_code":3,"signal":"","timed_out":false,"truncated":false,"duration_ms":1500,` +
				`"grant":` + string(grantJSON) + `,"strategy":"null","violations":[],"not_enforced":[]}`,
		},
		{
			name: "chunked output, violations, not enforced",
			res: &RunReport{Grant: g, Strategy: "landlock", chunks: [][]byte{[]byte("par"), []byte("tial")},
				ExitCode: -1, Signal: "SIGKILL", TimedOut: true, Truncated: true,
				Violations:  []shared.Violation{{Kind: "fs", Target: "/etc/shadow", Detail: "outside the grant"}},
				NotEnforced: []string{"network"}},
			want: `{"skill":"","tool":"","output":"partial","exit_code":-1,"signal":"SIGKILL","timed_out":true,"truncated":true,"duration_ms":0,` +
				`"grant":` + string(grantJSON) + `,"strategy":"landlock","violations":[{"kind":"fs","target":"/etc/shadow","detail":"outside the grant"}],"not_enforced":["network"]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.res)
			if err != nil {
				t.Fatal(err)
			}
			// json.Marshal re-escapes a Marshaler's HTML characters; an
			// encoder without HTML escaping shows what MarshalJSON wrote.
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tt.res); err != nil {
				t.Fatal(err)
			}
			if raw := bytes.TrimSpace(b.Bytes()); string(raw) != tt.want {
				t.Errorf("JSON\n got %s\nwant %s", raw, tt.want)
			}
			var back map[string]any
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if back["output"] != tt.res.outputString() {
				t.Errorf("output %q", back["output"])
			}
		})
	}
}

// One run reported three ways, as `run --json` prints it, as its last event
// carries it and as an MCP call's structured content, agrees key for key.
func TestRunReportIsOneShape(t *testing.T) {
	noUserConfig(t)
	h, err := Open(Options{SkillRoots: []string{"../examples/skills"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var last events.Event
	publish := func(e events.Event) error {
		if e.Event == events.RunCompleted || e.Event == events.RunFailed {
			last = e
		}
		return nil
	}
	res, err := h.Run(context.Background(), RunRequest{Skill: "text-stats", Tool: "count", Args: []string{"../examples/data/article.txt"}, Strategy: InProcessName}, publish)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(v any) map[string]any {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if d, ok := last.Data.(RunCompleted); !ok || d.Report != res {
		t.Fatalf("the last event carries %#v, not the run's report", last.Data)
	}
	cli := decode(res) // skillhost run --json
	tool := &mcpserver.ToolResult{Structured: res}
	mcp := decode(tool.Structured) // what the MCP SDK marshals
	if len(cli) < 12 || cli["skill"] != "text-stats" || cli["tool"] != "count" {
		t.Fatalf("run --json: %v", cli)
	}
	if !reflect.DeepEqual(cli, mcp) {
		t.Errorf("MCP structured content differs from run --json:\n%v\n%v", mcp, cli)
	}
	// The last event's data, as run --events writes it, is the report's
	// keys and values with its context's envelope added, nothing else.
	line, err := last.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var read events.Event
	if err := json.Unmarshal(line, &read); err != nil {
		t.Fatal(err)
	}
	cli["run_id"], cli["message_id"], cli["scope"] = last.RunID, last.MessageID, last.Scope
	want, err := marshalPlain(cli) // keys sorted at every level
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := read.Data.(json.RawMessage); string(got) != string(want) {
		t.Errorf("the last event's data\n%s\nrun --json's report with the envelope\n%s", got, want)
	}
}
