package mcpserver

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callMetrics are the server's Prometheus metrics of tool calls, served
// over HTTP at /metrics (behind the same bearer token as the rest) in the
// text exposition format, with the process's and the Go runtime's own
// (runtime_metrics.go). They are written here rather than through
// client_golang, whose initialisers would cost every start of the
// skillhost binary, one-shot runs included.
type callMetrics struct {
	once sync.Once

	mu       sync.Mutex
	calls    map[[2]string]uint64    // by tool and outcome
	duration map[string]*durationSum // by tool
	active   int
}

// durationSum is one tool's histogram of call durations: counts per
// bucket of durationBuckets (not cumulative; the last is above them all),
// their count and their sum.
type durationSum struct {
	counts []uint64
	count  uint64
	sum    float64
}

// durationBuckets are the upper bounds, in seconds, of the histogram of
// call durations.
var durationBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900}

// Outcomes of a tool call, the "outcome" label of
// skillhost_mcp_tool_calls_total.
const (
	callOK        = "ok"        // the tool ran and succeeded
	callFailed    = "failed"    // a result flagged as an error (the script failed, or was refused)
	callError     = "error"     // the call got a protocol error
	callCancelled = "cancelled" // the client cancelled it
)

// otherTool labels calls of names the server does not offer as script
// tools (its own tools, unknown names), so a client cannot grow the
// metrics without bound.
const otherTool = "other"

func (m *callMetrics) init() {
	m.calls = map[[2]string]uint64{}
	m.duration = map[string]*durationSum{}
}

// started counts a call in progress.
func (m *callMetrics) started() {
	m.mu.Lock()
	m.active++
	m.mu.Unlock()
}

// ended counts a call that took d with outcome.
func (m *callMetrics) ended(tool, outcome string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active--
	h := m.duration[tool]
	if h == nil {
		h = &durationSum{counts: make([]uint64, len(durationBuckets)+1)}
		m.duration[tool] = h
	}
	secs := d.Seconds()
	i, _ := slices.BinarySearch(durationBuckets, secs) // the first bound >= secs: le is inclusive
	h.counts[i]++
	h.count++
	h.sum += secs
	m.calls[[2]string{tool, outcome}]++
}

// families are the call metrics as they stand, each family's series in
// the order of their label values.
func (m *callMetrics) families() []family {
	m.mu.Lock()
	defer m.mu.Unlock()
	calls := family{name: "skillhost_mcp_tool_calls_total", typ: "counter",
		help: "Tool calls by tool and outcome (ok, failed, error, cancelled)."}
	for k, n := range m.calls {
		calls.samples = append(calls.samples, sample{labels: []label{{"outcome", k[1]}, {"tool", k[0]}}, value: float64(n)})
	}
	slices.SortFunc(calls.samples, func(a, b sample) int {
		return strings.Compare(a.labels[0].value+"\x00"+a.labels[1].value, b.labels[0].value+"\x00"+b.labels[1].value)
	})
	dur := family{name: "skillhost_mcp_tool_call_duration_seconds", typ: "histogram", help: "How long tool calls took."}
	tools := make([]string, 0, len(m.duration))
	for tool := range m.duration {
		tools = append(tools, tool)
	}
	slices.Sort(tools)
	for _, tool := range tools {
		h := m.duration[tool]
		var cum uint64
		for i, le := range durationBuckets {
			cum += h.counts[i]
			dur.samples = append(dur.samples, sample{suffix: "_bucket", labels: []label{{"tool", tool}, {"le", formatValue(le)}}, value: float64(cum)})
		}
		dur.samples = append(dur.samples,
			sample{suffix: "_bucket", labels: []label{{"tool", tool}, {"le", "+Inf"}}, value: float64(h.count)},
			sample{suffix: "_sum", labels: []label{{"tool", tool}}, value: h.sum},
			sample{suffix: "_count", labels: []label{{"tool", tool}}, value: float64(h.count)})
	}
	active := gauge("skillhost_mcp_tool_calls_active", "Tool calls in progress.", float64(m.active))
	return []family{calls, dur, active}
}

// withMetrics counts the server's tool calls (from the first call on)
// and serves GET /metrics ahead of h.
func (s *Server) withMetrics(h http.Handler) http.Handler {
	m := &s.callMetrics
	m.once.Do(func() {
		m.init()
		s.mcp.AddReceivingMiddleware(s.countCalls)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", expositionType)
			_ = writeFamilies(w, append(m.families(), runtimeFamilies()...)) // the scraper sees a cut-off body
			return
		}
		h.ServeHTTP(w, r)
	})
}

// countCalls is the middleware that counts tools/call requests.
func (s *Server) countCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		tool := otherTool
		s.mu.Lock()
		if _, offered := s.tools[call.Params.Name]; offered {
			tool = call.Params.Name
		}
		s.mu.Unlock()
		m := &s.callMetrics
		m.started()
		start := time.Now()
		res, err := next(ctx, method, req)
		outcome := callOK
		switch r, _ := res.(*mcp.CallToolResult); {
		case ctx.Err() != nil:
			outcome = callCancelled
		case err != nil:
			outcome = callError
		case r != nil && r.IsError:
			outcome = callFailed
		}
		m.ended(tool, outcome, time.Since(start))
		return res, err
	}
}
