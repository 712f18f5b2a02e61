package temporal

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.temporal.io/sdk/client"
)

// workerMetrics are a worker's Prometheus metrics: its runs, its skill
// cache, its local plugin, and the Temporal SDK's own (through sdkSink),
// all in one registry that --metrics serves.
type workerMetrics struct {
	reg                                 *prometheus.Registry
	started, completed, failed, refused prometheus.Counter
	duration                            prometheus.Histogram
	cacheHits, cacheMisses              prometheus.Counter
	pluginRestarts                      prometheus.Counter
	sdk                                 *sdkSink
}

// newWorkerMetrics registers a worker's metrics; active and cacheBytes
// are read at each scrape.
func newWorkerMetrics(active, cacheBytes func() float64) *workerMetrics {
	m := &workerMetrics{reg: prometheus.NewRegistry(), sdk: newSDKSink()}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: "skillhost_worker_" + name, Help: help})
		m.reg.MustRegister(c)
		return c
	}
	m.started = counter("runs_started_total", "Jobs this worker took (each ends completed, failed or refused).")
	m.completed = counter("runs_completed_total", "Runs whose script exited 0.")
	m.failed = counter("runs_failed_total", "Runs whose script started and did not exit 0 (non-zero exit, timeout, kill, cancel, plugin error, cluster lost).")
	m.refused = counter("runs_refused_total", "Jobs refused before anything ran (over the ceiling, version skew, missing interpreter, unreadable skill).")
	m.cacheHits = counter("skill_cache_hits_total", "Runs whose skill was already in the cache.")
	m.cacheMisses = counter("skill_cache_misses_total", "Runs whose skill was fetched from the host.")
	m.pluginRestarts = counter("plugin_restarts_total", "Times the local sandbox plugin was found dead and started again.")
	m.duration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "skillhost_worker_run_duration_seconds",
		Help:    "How long runs that started took, from taking the job to the result.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}})
	m.reg.MustRegister(m.duration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "skillhost_worker_runs_active", Help: "Runs in progress."}, active),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "skillhost_worker_skill_cache_bytes", Help: "Bytes of skills in the cache directory."}, cacheBytes),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), m.sdk)
	return m
}

// sdkSink collects what the Temporal SDK reports through
// client.MetricsHandler (counters, gauges and timers, tagged), and serves
// it to Prometheus: a counter stays a counter, a gauge a gauge, and a
// timer becomes a histogram in seconds. A metric's series may carry
// different tags: at a scrape, each gets the union of its metric's tag
// names, empty where it has none, as Prometheus wants one label set a
// metric.
type sdkSink struct {
	mu     sync.Mutex
	series map[string]*sdkSeries // by name and tags
}

type sdkKind int

const (
	sdkCounter sdkKind = iota
	sdkGauge
	sdkTimer
)

// sdkSeries is one metric with one set of tags.
type sdkSeries struct {
	name    string
	kind    sdkKind
	tags    map[string]string
	value   float64  // a counter's total, a gauge's last value
	buckets []uint64 // a timer's counts per sdkBuckets bound (not cumulative)
	count   uint64
	sum     float64
}

// sdkBuckets are the bounds, in seconds, of the SDK's timers.
var sdkBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60}

func newSDKSink() *sdkSink { return &sdkSink{series: map[string]*sdkSeries{}} }

// handler is the client.MetricsHandler that reports into s.
func (s *sdkSink) handler() client.MetricsHandler { return sdkHandler{sink: s} }

// get returns the series of name with tags, made on first use.
func (s *sdkSink) get(name string, kind sdkKind, tags map[string]string) *sdkSeries {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + tags[k])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ser := s.series[b.String()]
	if ser == nil {
		ser = &sdkSeries{name: promName(name), kind: kind, tags: tags}
		if kind == sdkTimer {
			ser.buckets = make([]uint64, len(sdkBuckets))
		}
		s.series[b.String()] = ser
	}
	return ser
}

// Describe implements prometheus.Collector: the SDK's metrics are not
// known ahead, so the collector is unchecked.
func (s *sdkSink) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (s *sdkSink) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := map[string][]*sdkSeries{}
	for _, ser := range s.series {
		byName[ser.name] = append(byName[ser.name], ser)
	}
	for name, list := range byName {
		labels := map[string]bool{}
		for _, ser := range list {
			for k := range ser.tags {
				labels[promName(k)] = true
			}
		}
		names := make([]string, 0, len(labels))
		for k := range labels {
			names = append(names, k)
		}
		sort.Strings(names)
		desc := prometheus.NewDesc(name, "Temporal SDK metric "+name+".", names, nil)
		for _, ser := range list {
			if ser.kind != list[0].kind {
				continue // the SDK used one name for two kinds: keep the first
			}
			values := make([]string, len(names))
			for k, v := range ser.tags {
				values[sort.SearchStrings(names, promName(k))] = v
			}
			var m prometheus.Metric
			var err error
			switch ser.kind {
			case sdkCounter:
				m, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, ser.value, values...)
			case sdkGauge:
				m, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, ser.value, values...)
			default:
				cum := map[float64]uint64{}
				var n uint64
				for i, b := range sdkBuckets {
					n += ser.buckets[i]
					cum[b] = n
				}
				m, err = prometheus.NewConstHistogram(desc, ser.count, ser.sum, cum, values...)
			}
			if err == nil {
				ch <- m
			}
		}
	}
}

// promName makes name a valid Prometheus metric or label name.
func promName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// sdkHandler is a client.MetricsHandler with a set of tags.
type sdkHandler struct {
	sink *sdkSink
	tags map[string]string
}

// WithTags implements client.MetricsHandler.
func (h sdkHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return sdkHandler{sink: h.sink, tags: merged}
}

// Counter implements client.MetricsHandler.
func (h sdkHandler) Counter(name string) client.MetricsCounter {
	ser := h.sink.get(name, sdkCounter, h.tags)
	return counterFunc(func(d int64) {
		h.sink.mu.Lock()
		ser.value += float64(d)
		h.sink.mu.Unlock()
	})
}

// Gauge implements client.MetricsHandler.
func (h sdkHandler) Gauge(name string) client.MetricsGauge {
	ser := h.sink.get(name, sdkGauge, h.tags)
	return gaugeFunc(func(v float64) {
		h.sink.mu.Lock()
		ser.value = v
		h.sink.mu.Unlock()
	})
}

// Timer implements client.MetricsHandler.
func (h sdkHandler) Timer(name string) client.MetricsTimer {
	ser := h.sink.get(name, sdkTimer, h.tags)
	return timerFunc(func(d time.Duration) {
		s := d.Seconds()
		h.sink.mu.Lock()
		defer h.sink.mu.Unlock()
		ser.count++
		ser.sum += s
		for i, b := range sdkBuckets {
			if s <= b {
				ser.buckets[i]++
				return
			}
		}
		// Past the last bound: in count only, the +Inf bucket.
	})
}

// counterFunc, gaugeFunc and timerFunc are the SDK's metric interfaces
// as functions.
type (
	counterFunc func(int64)
	gaugeFunc   func(float64)
	timerFunc   func(time.Duration)
)

func (f counterFunc) Inc(d int64)          { f(d) }
func (f gaugeFunc) Update(v float64)       { f(v) }
func (f timerFunc) Record(d time.Duration) { f(d) }
