package mcpserver

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
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
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("/metrics Content-Type %q", ct)
	}
	checkParsed(t, body)
}

// checkParsed reads body with Prometheus's own parser and checks the tool
// call families of TestHTTPMetrics and the runtime's.
func checkParsed(t *testing.T, body []byte) {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("Prometheus's parser refuses /metrics: %v\n%s", err, body)
	}
	calls := fams["skillhost_mcp_tool_calls_total"]
	if calls.GetType() != dto.MetricType_COUNTER || calls.GetHelp() != "Tool calls by tool and outcome (ok, failed, error, cancelled)." {
		t.Errorf("skillhost_mcp_tool_calls_total: %v", calls)
	}
	var total float64
	for _, m := range calls.GetMetric() {
		total += m.GetCounter().GetValue()
	}
	if total != 4 {
		t.Errorf("%v tool calls counted, want 4", total)
	}
	dur := fams["skillhost_mcp_tool_call_duration_seconds"]
	if dur.GetType() != dto.MetricType_HISTOGRAM || dur.GetHelp() != "How long tool calls took." {
		t.Fatalf("skillhost_mcp_tool_call_duration_seconds: %v", dur)
	}
	for _, m := range dur.GetMetric() {
		h := m.GetHistogram()
		if len(h.GetBucket()) != len(durationBuckets)+1 { // and +Inf
			t.Fatalf("%d buckets, want %d and +Inf", len(h.GetBucket()), len(durationBuckets))
		}
		last := h.GetBucket()[len(durationBuckets)-1]
		if last.GetUpperBound() != 900 || last.GetCumulativeCount() != h.GetSampleCount() || h.GetSampleSum() <= 0 {
			t.Errorf("histogram %v: every call took under 900 s, and some time", h)
		}
	}
	if a := fams["skillhost_mcp_tool_calls_active"]; a.GetType() != dto.MetricType_GAUGE || a.GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Errorf("skillhost_mcp_tool_calls_active: %v", a)
	}
	positive := []string{"go_goroutines", "go_memstats_alloc_bytes", "go_info"}
	present := []string{"go_gc_duration_seconds"}
	if runtime.GOOS == "linux" {
		positive = append(positive, "process_resident_memory_bytes", "process_open_fds", "process_max_fds")
		present = append(present, "process_cpu_seconds_total", "process_start_time_seconds")
	}
	for _, name := range append(positive, present...) {
		f := fams[name]
		if f == nil || len(f.GetMetric()) == 0 {
			t.Errorf("/metrics lacks %s", name)
			continue
		}
		m := f.GetMetric()[0]
		if v := m.GetGauge().GetValue() + m.GetCounter().GetValue(); slices.Contains(positive, name) && v <= 0 {
			t.Errorf("%s = %v, want more than 0", name, v)
		}
	}
	if start := fams["process_start_time_seconds"]; start != nil {
		if d := time.Since(time.Unix(int64(start.GetMetric()[0].GetGauge().GetValue()), 0)); d < -2*time.Second || d > time.Hour {
			t.Errorf("process_start_time_seconds is %v from now", d)
		}
	}
}

// A call is counted in the first bucket whose bound it does not exceed (a
// bound is inclusive); one past every bound only in +Inf.
func TestDurationBuckets(t *testing.T) {
	var m callMetrics
	m.init()
	for _, d := range []time.Duration{50 * time.Millisecond, 51 * time.Millisecond, time.Second, time.Hour} {
		m.started()
		m.ended("t", callOK, d)
	}
	var buf bytes.Buffer
	if err := writeFamilies(&buf, m.families()); err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatal(err)
	}
	h := fams["skillhost_mcp_tool_call_duration_seconds"].GetMetric()[0].GetHistogram()
	got := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		got[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for le, n := range map[float64]uint64{0.05: 1, 0.1: 2, 0.5: 2, 1: 3, 900: 3, math.Inf(1): 4} {
		if got[le] != n {
			t.Errorf("bucket le=%v holds %d, want %d", le, got[le], n)
		}
	}
	if h.GetSampleCount() != 4 || math.Abs(h.GetSampleSum()-3601.101) > 1e-9 {
		t.Errorf("count %d sum %v, want 4 and 3601.101", h.GetSampleCount(), h.GetSampleSum())
	}
}

// Label values and HELP texts with a quote, a backslash or a line feed
// are escaped so that a parser reads them back as written; a family
// without samples is left out.
func TestExpositionEscapes(t *testing.T) {
	odd := "a \"quoted\" \\ name\nnext"
	var buf bytes.Buffer
	err := writeFamilies(&buf, []family{
		{name: "x_total", help: "Help with \\ and\na line feed.", typ: "counter",
			samples: []sample{{labels: []label{{"tool", odd}}, value: 3}}},
		{name: "y_total", help: "Nothing counted.", typ: "counter"},
		gauge("z", "Not a number.", math.NaN()),
	})
	if err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	x := fams["x_total"]
	if x.GetHelp() != "Help with \\ and\na line feed." || x.GetMetric()[0].GetLabel()[0].GetValue() != odd || x.GetMetric()[0].GetCounter().GetValue() != 3 {
		t.Errorf("x_total read back as %v", x)
	}
	if _, ok := fams["y_total"]; ok {
		t.Errorf("a family without samples is written:\n%s", buf.Bytes())
	}
	if !math.IsNaN(fams["z"].GetMetric()[0].GetGauge().GetValue()) {
		t.Errorf("z read back as %v", fams["z"])
	}
}
