package landlock_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
)

// BenchmarkRun measures one run of /bin/true through the real null and
// Landlock plugins; the difference is the cost of confinement per run.
func BenchmarkRun(b *testing.B) {
	dir := b.TempDir()
	req := shared.Request{
		Argv: []string{"/bin/true"}, Dir: dir, SkillDir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Grant:       shared.Grant{FSRead: []string{dir}, FSWrite: []string{dir}, Timeout: 10 * time.Second},
		OutputLimit: 1 << 20,
		Limits:      shared.Limits{OpenFiles: 1024, FileSize: 1 << 28, Processes: 256, Memory: 1 << 31},
	}
	for _, pkg := range []string{nullPkg, landlockPkg} {
		name := map[string]string{nullPkg: "null", landlockPkg: "landlock"}[pkg]
		b.Run(name, func(b *testing.B) {
			conn, err := pluginclient.Launch(pluginclient.LaunchConfig{Path: testbin.Path(pkg), AutoMTLS: true, Env: []string{"PATH=/usr/bin:/bin"}})
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			discard := func([]byte) error { return nil }
			if _, err := conn.Execute(context.Background(), req, discard); err != nil {
				b.Fatal(err)
			}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				res, err := conn.Execute(context.Background(), req, discard)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%v %+v", err, res)
				}
				times = append(times, time.Since(start))
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(times[len(times)*9/10])/1e6, "p90-ms")
		})
	}
}
