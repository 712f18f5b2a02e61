package temporal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skillhost/skillhost/shared"
)

// serveHTTP serves, on addr, the worker's Prometheus metrics at /metrics,
// /healthz (200 while the process serves HTTP at all) and /readyz (200
// when the worker is connected to the cluster, polling its task queue
// and its local plugin answers its probe; 503 with the reason otherwise,
// and from the moment it starts draining).
func (f *Fleet) serveHTTP(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(f.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if why := f.unready(r.Context()); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	f.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	f.httpAddr = ln.Addr().String()
	go func() {
		if err := f.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			f.log.Error("metrics server stopped", "address", f.httpAddr, "error", err.Error())
		}
	}()
	return nil
}

// MetricsAddr is where the worker serves /metrics, /healthz and /readyz
// ("" without WorkerOptions.MetricsAddr).
func (f *Fleet) MetricsAddr() string { return f.httpAddr }

// unready says why the worker should not be sent jobs now, or "".
func (f *Fleet) unready(ctx context.Context) string {
	f.mu.Lock()
	stopped := f.stopped
	f.mu.Unlock()
	if stopped {
		return "draining: the worker stopped polling and finishes the runs it holds"
	}
	if f.lost.Load() {
		return "lost the cluster at " + f.opts.Address
	}
	local, err := f.plugin()
	if err != nil {
		return fmt.Sprintf("the %s plugin: %v", f.opts.Strategy, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p, err := local.Probe(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("the %s plugin does not answer its probe: %v", f.opts.Strategy, err)
	case p.Status != shared.Healthy:
		return fmt.Sprintf("the %s plugin cannot confine here: %s", f.opts.Strategy, p.Reason)
	}
	return ""
}
