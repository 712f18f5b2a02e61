package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend"
	"github.com/skillhost/skillhost/shared/pluginclient"
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
				conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: path, AutoMTLS: tc.mtls, Env: []string{"PATH=/usr/bin:/bin"}})
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
// the long-lived null and Landlock plugins (warm calls through the Go API).
// cpu-ms/op counts every process taking part (this one, the plugin and the
// children either reaped); the difference to exec is the per-call overhead.
func BenchmarkCall(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip(err)
	}
	req := request("")
	req.Argv = []string{truePath}
	measure := func(b *testing.B, pid func() int, call func() error) {
		var times []time.Duration
		cpu0 := cpuTime(pid())
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if err := call(); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
		}
		b.StopTimer()
		b.ReportMetric(float64(cpuTime(pid())-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		reportPercentiles(b, times)
	}
	none := func() int { return 0 }
	b.Run("exec", func(b *testing.B) {
		measure(b, none, func() error { return exec.Command(truePath).Run() })
	})
	b.Run("runner", func(b *testing.B) {
		measure(b, none, func() error {
			_, err := backend.Run(context.Background(), backend.SpecFor(req), func([]byte) error { return nil })
			return err
		})
	})
	for _, name := range []string{Null, "landlock"} {
		b.Run(name+"-plugin", func(b *testing.B) {
			if name != Null {
				if _, err := testbin.Build("./cmd/skillhost-sandbox-" + name); err != nil {
					b.Fatal(err)
				}
			}
			m := NewManager(Options{Dirs: []string{binDir}, AutoMTLS: true, Env: []string{"PATH=" + os.Getenv("PATH")}})
			defer m.Close()
			ex := m.Executor(name)
			if p, err := ex.Probe(context.Background()); err != nil || p.Status != shared.Healthy {
				b.Skipf("%s plugin: %+v, %v", name, p, err)
			}
			call := func() error {
				_, err := ex.Execute(context.Background(), req, func([]byte) error { return nil })
				return err
			}
			if err := call(); err != nil {
				b.Fatal(err) // start the plugin outside the measurement
			}
			measure(b, func() int { return m.Pid(name) }, call)
		})
	}
}

// BenchmarkConcurrentCalls runs /bin/true through one null plugin from 1,
// 2, 8 and 32 goroutines at once and reports calls per second.
func BenchmarkConcurrentCalls(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip(err)
	}
	req := request("")
	req.Argv = []string{truePath}
	m := NewManager(Options{Dirs: []string{binDir}, AutoMTLS: true, Env: []string{"PATH=" + os.Getenv("PATH")}})
	defer m.Close()
	ex := m.Executor(Null)
	if _, err := ex.Execute(context.Background(), req, func([]byte) error { return nil }); err != nil {
		b.Fatal(err)
	}
	for _, k := range []int{1, 2, 8, 32} {
		b.Run(fmt.Sprintf("parallel-%d", k), func(b *testing.B) {
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, k)
			cpu0 := cpuTime(m.Pid(Null))
			start := time.Now()
			for range k {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if _, err := ex.Execute(context.Background(), req, func([]byte) error { return nil }); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			select {
			case err := <-errs:
				b.Fatal(err)
			default:
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
			b.ReportMetric(float64(cpuTime(m.Pid(Null))-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}
