package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// reportPercentiles adds p50 and p90 of the per-iteration times, in
// milliseconds, to the benchmark's output.
func reportPercentiles(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
	b.ReportMetric(ms(times[len(times)*9/10]), "p90-ms")
}

// BenchmarkPluginStart measures start-up to the first answered RPC, with
// and without AutoMTLS.
func BenchmarkPluginStart(b *testing.B) {
	path := filepath.Join(binDir, "skillhost-sandbox-null")
	for _, tc := range []struct {
		name string
		mtls bool
	}{{"plain", false}, {"automtls", true}} {
		b.Run(tc.name, func(b *testing.B) {
			var times []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				conn, err := shared.Launch(shared.LaunchConfig{Path: path, AutoMTLS: tc.mtls, Env: []string{"PATH=/usr/bin:/bin"}})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := conn.Info(context.Background()); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
				b.StopTimer()
				conn.Close()
				b.StartTimer()
			}
			reportPercentiles(b, times)
		})
	}
}

// BenchmarkCall measures one run of /bin/true: a bare fork+exec, the
// shared runner in this process (with its supervisor), and a call through
// the long-lived null plugin. The difference is the per-call overhead of
// the plugin.
func BenchmarkCall(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip(err)
	}
	req := request("")
	req.Argv = []string{truePath}
	b.Run("exec", func(b *testing.B) {
		var times []time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
		}
		reportPercentiles(b, times)
	})
	b.Run("runner", func(b *testing.B) {
		var times []time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if _, err := shared.Run(context.Background(), shared.SpecFor(req), func([]byte) error { return nil }); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
		}
		reportPercentiles(b, times)
	})
	b.Run("null-plugin", func(b *testing.B) {
		m := NewManager(Options{Dirs: []string{binDir}, AutoMTLS: true, Env: []string{"PATH=" + os.Getenv("PATH")}})
		defer m.Close()
		ex := m.Executor(Null)
		if _, err := ex.Execute(context.Background(), req, func([]byte) error { return nil }); err != nil {
			b.Fatal(err) // start the plugin outside the measurement
		}
		var times []time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if _, err := ex.Execute(context.Background(), req, func([]byte) error { return nil }); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
		}
		reportPercentiles(b, times)
	})
}
