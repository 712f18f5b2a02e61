package host

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/shared"
)

func TestRunResultJSON(t *testing.T) {
	g := grant.Grant{Timeout: 2 * time.Second, Trust: "external"}
	grantJSON, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		res  *RunResult
		want string
	}{
		{
			name: "empty lists are [], not null",
			res:  &RunResult{Grant: g, Strategy: "null", Output: []byte("a < b && c\n"), Result: shared.Result{ExitCode: 3, Duration: 1500 * time.Millisecond}},
			want: `{"output":"a < b && c\n","exit_code":3,"signal":"","timed_out":false,"truncated":false,"duration_ms":1500,` +
				`"grant":` + string(grantJSON) + `,"strategy":"null","violations":[],"not_enforced":[]}`,
		},
		{
			name: "chunked output, violations, not enforced",
			res: &RunResult{Grant: g, Strategy: "landlock", chunks: [][]byte{[]byte("par"), []byte("tial")},
				Result: shared.Result{ExitCode: -1, Signal: "SIGKILL", TimedOut: true, Truncated: true,
					Violations:  []shared.Violation{{Kind: "fs", Target: "/etc/shadow", Detail: "outside the grant"}},
					NotEnforced: []string{"network"}}},
			want: `{"output":"partial","exit_code":-1,"signal":"SIGKILL","timed_out":true,"truncated":true,"duration_ms":0,` +
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

// The run's last event carries the JSON form plus the skill and tool.
func TestRunResultFields(t *testing.T) {
	r := &RunResult{Skill: &skill.Skill{Name: "pdf"}, Tool: &skill.Tool{Name: "extract"}, Output: []byte("x"), Strategy: "null"}
	f := r.fields()
	var form map[string]any
	raw, _ := json.Marshal(r)
	if err := json.Unmarshal(raw, &form); err != nil {
		t.Fatal(err)
	}
	if f["skill"] != "pdf" || f["tool"] != "extract" {
		t.Errorf("fields name %v/%v", f["skill"], f["tool"])
	}
	if len(f) != len(form)+2 {
		t.Errorf("fields has %d keys, the JSON form %d (+2 expected)", len(f), len(form))
	}
	for k := range form {
		if _, ok := f[k]; !ok {
			t.Errorf("fields lacks %q", k)
		}
	}
}
