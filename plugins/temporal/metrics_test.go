package temporal

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The SDK's metrics reach Prometheus: a counter, a gauge and a timer (as
// a histogram in seconds), each series with its tags, the label set of a
// metric the union of its series' tags (empty where a series has none).
func TestSDKSink(t *testing.T) {
	s := newSDKSink()
	h := s.handler().WithTags(map[string]string{"namespace": "default"})
	q := h.WithTags(map[string]string{"task_queue": "skillhost"})
	h.Counter("temporal_request").Inc(2)
	q.Counter("temporal_request").Inc(3)
	q.Counter("temporal_request").Inc(1)
	q.Gauge("temporal_worker_task_slots_available").Update(4)
	q.Gauge("temporal_worker_task_slots_available").Update(3)
	q.Timer("temporal_activity_execution_latency").Record(20 * time.Millisecond)
	q.Timer("temporal_activity_execution_latency").Record(2 * time.Minute)
	h.WithTags(map[string]string{"bad-name": "x"}).Counter("temporal.odd-name").Inc(1)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(s)
	want := `
# HELP temporal_activity_execution_latency Temporal SDK metric temporal_activity_execution_latency.
# TYPE temporal_activity_execution_latency histogram
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="0.001"} 0
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="0.005"} 0
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="0.01"} 0
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="0.05"} 1
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="0.1"} 1
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="0.5"} 1
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="1"} 1
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="5"} 1
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="10"} 1
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="60"} 1
temporal_activity_execution_latency_bucket{namespace="default",task_queue="skillhost",le="+Inf"} 2
temporal_activity_execution_latency_sum{namespace="default",task_queue="skillhost"} 120.02
temporal_activity_execution_latency_count{namespace="default",task_queue="skillhost"} 2
# HELP temporal_odd_name Temporal SDK metric temporal_odd_name.
# TYPE temporal_odd_name counter
temporal_odd_name{bad_name="x",namespace="default"} 1
# HELP temporal_request Temporal SDK metric temporal_request.
# TYPE temporal_request counter
temporal_request{namespace="default",task_queue=""} 2
temporal_request{namespace="default",task_queue="skillhost"} 4
# HELP temporal_worker_task_slots_available Temporal SDK metric temporal_worker_task_slots_available.
# TYPE temporal_worker_task_slots_available gauge
temporal_worker_task_slots_available{namespace="default",task_queue="skillhost"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
