package mcpserver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// callMetrics are the server's Prometheus metrics of tool calls, served
// over HTTP at /metrics (behind the same bearer token as the rest).
type callMetrics struct {
	once     sync.Once
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec   // by tool and outcome
	duration *prometheus.HistogramVec // by tool
	active   prometheus.Gauge
}

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
	m.reg = prometheus.NewRegistry()
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_mcp_tool_calls_total",
		Help: "Tool calls by tool and outcome (ok, failed, error, cancelled)."}, []string{"tool", "outcome"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "skillhost_mcp_tool_call_duration_seconds",
		Help: "How long tool calls took.", Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900}}, []string{"tool"})
	m.active = prometheus.NewGauge(prometheus.GaugeOpts{Name: "skillhost_mcp_tool_calls_active", Help: "Tool calls in progress."})
	m.reg.MustRegister(m.calls, m.duration, m.active, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// withMetrics counts the server's tool calls (from the first call on)
// and serves GET /metrics ahead of h.
func (s *Server) withMetrics(h http.Handler) http.Handler {
	m := &s.callMetrics
	m.once.Do(func() {
		m.init()
		s.mcp.AddReceivingMiddleware(s.countCalls)
	})
	metrics := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && r.Method == http.MethodGet {
			metrics.ServeHTTP(w, r)
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
		m.active.Inc()
		start := time.Now()
		res, err := next(ctx, method, req)
		m.active.Dec()
		m.duration.WithLabelValues(tool).Observe(time.Since(start).Seconds())
		outcome := callOK
		switch r, _ := res.(*mcp.CallToolResult); {
		case ctx.Err() != nil:
			outcome = callCancelled
		case err != nil:
			outcome = callError
		case r != nil && r.IsError:
			outcome = callFailed
		}
		m.calls.WithLabelValues(tool, outcome).Inc()
		return res, err
	}
}
