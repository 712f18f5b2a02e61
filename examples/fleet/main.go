// Command fleet runs skill tools on a fleet: it starts an in-process
// Temporal server and two workers (each confining its runs with the
// Landlock plugin), then makes 40 mixed calls through the host, as an
// agent platform would, and prints how each ended and which worker ran
// how many. It is what `make demo-fleet` runs:
//
//	make build && cd examples/fleet && go run . -bin ../../bin
//
// -calls, -concurrency and -workers change the mix; -bench measures the
// per-call overhead against the same runs local and the throughput with
// 1, 2 and 4 workers instead.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.temporal.io/server/temporaltest"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/plugins/temporal"
	"github.com/skillhost/skillhost/shared/procstat"
)

func main() {
	calls := flag.Int("calls", 40, "tool calls to make")
	concurrency := flag.Int("concurrency", 8, "calls at once")
	workers := flag.Int("workers", 2, "fleet workers")
	bench := flag.Bool("bench", false, "measure overhead and throughput instead")
	bin := flag.String("bin", "bin", "where skillhost's plugins are (make build puts them in bin/)")
	flag.Parse()
	if err := run(*calls, *concurrency, *workers, *bench, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

// fleet is a cluster, its workers and a host using it.
type fleet struct {
	ts      *temporaltest.TestServer
	workers []*temporal.Fleet
	procs   []*exec.Cmd // workers as processes of their own (the benchmark's)
	h       *host.Host
	work    string // removed by stop
	out     string
}

// start starts a server, nWorkers workers (in this process, or as
// processes of their own with separate) and a host using them.
func start(nWorkers int, bin string, separate bool) (*fleet, error) {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(bin, "skillhost-sandbox-temporal")); err != nil {
		return nil, fmt.Errorf("%s has no skillhost-sandbox-temporal: run make build first", bin)
	}
	f := &fleet{ts: temporaltest.NewServer()}
	addr, ns := f.ts.GetFrontendHostPort(), f.ts.GetDefaultNamespace()
	work, err := os.MkdirTemp("", "skillhost-fleet-")
	if err != nil {
		return nil, err
	}
	os.Chmod(work, 0o755)
	f.work = work
	for i := range nWorkers {
		if separate {
			cmd, err := workerProcess(bin, addr, ns, filepath.Join(work, fmt.Sprintf("worker-%d", i+1)), fmt.Sprintf("worker-%d", i+1))
			if err != nil {
				f.stop()
				return nil, err
			}
			f.procs = append(f.procs, cmd)
			continue
		}
		w, err := temporal.StartWorker(temporal.WorkerOptions{
			Connection: temporal.Connection{Address: addr, Namespace: ns},
			PluginsDir: bin, CacheDir: filepath.Join(work, fmt.Sprintf("worker-%d", i+1)),
			Identity: fmt.Sprintf("worker-%d", i+1), Concurrency: 4, MetricsAddr: "127.0.0.1:0",
		})
		if err != nil {
			f.stop()
			return nil, err
		}
		f.workers = append(f.workers, w)
	}
	config := filepath.Join(work, "config.yaml")
	os.WriteFile(config, fmt.Appendf(nil, "sandbox:\n  strategy: temporal\nplugins:\n  config:\n    temporal: {address: %q, namespace: %q}\n", addr, ns), 0o644)
	f.out = filepath.Join(work, "out")
	os.MkdirAll(f.out, 0o777)
	os.Chmod(f.out, 0o777)
	skills, _ := filepath.Abs("skills") // the module's directory, where make demo-fleet runs it
	f.h, err = host.Open(host.Options{ConfigPath: config, SkillRoots: []string{skills}, PluginDirs: []string{bin}, Warnings: os.Stderr})
	if err != nil {
		f.stop()
		return nil, err
	}
	return f, nil
}

// workerProcess starts `skillhost-sandbox-temporal worker` and returns
// once it serves.
func workerProcess(bin, addr, ns, cache, name string) (*exec.Cmd, error) {
	cmd := exec.Command(filepath.Join(bin, "skillhost-sandbox-temporal"), "worker", "--address", addr, "--namespace", ns,
		"--cache-dir", cache, "--identity", name, "--concurrency", "4", "--plugins-dir", bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "serving task queue") {
			go io.Copy(io.Discard, stderr)
			return cmd, nil
		}
	}
	_ = cmd.Wait()
	return nil, fmt.Errorf("worker %s did not start", name)
}

func (f *fleet) stop() {
	if f.h != nil {
		f.h.Close()
	}
	for _, w := range f.workers {
		w.Stop()
	}
	for _, p := range f.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
		_ = p.Wait()
	}
	f.ts.Stop()
	if f.work != "" {
		os.RemoveAll(f.work)
	}
}

// call is one tool call of the mix and how it ended.
type call struct {
	n     int
	tool  string
	runID string
	res   *host.RunReport
	err   error
	took  time.Duration
}

// mix is the n-th call's tool: fast most often, then slow, failing,
// writing and timing out.
func mix(n int) string {
	return []string{"fast", "slow", "fast", "fail", "fast", "write", "fast", "slow", "hang", "fast"}[n%10]
}

// each calls do(i) for i in [0, n), c at a time, and waits for them all.
func each(n, c int, do func(i int)) {
	sem := make(chan struct{}, c)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			do(i)
		}()
	}
	wg.Wait()
}

func (f *fleet) calls(n, concurrency int, strategy string) []call {
	out := make([]call, n)
	each(n, concurrency, func(i int) {
		tool := mix(i)
		req := host.RunRequest{Skill: "fleet-demo", Tool: tool, Args: []string{fmt.Sprint(i + 1)}, Strategy: strategy}
		if tool == "write" {
			req.Workspace, req.WorkspaceDirs = "read-write", []string{f.out}
		}
		start := time.Now()
		var runID string
		res, err := f.h.Run(context.Background(), req, func(e events.Event) error {
			if id := e.RunID; id != "" && runID == "" {
				runID = id
			}
			return nil
		})
		out[i] = call{n: i + 1, tool: tool, runID: runID, res: res, err: err, took: time.Since(start)}
	})
	return out
}

func run(nCalls, concurrency, nWorkers int, bench bool, bin string) error {
	if bench {
		return benchmark(bin)
	}
	f, err := start(nWorkers, bin, false)
	if err != nil {
		return err
	}
	defer f.stop()
	fmt.Printf("Temporal server at %s, %d workers; %d calls, %d at once\n\n", f.ts.GetFrontendHostPort(), nWorkers, nCalls, concurrency)
	start := time.Now()
	results := f.calls(nCalls, concurrency, "")
	wall := time.Since(start)
	tally := map[string]int{}
	for _, c := range results {
		outcome, kind := "", ""
		switch {
		case c.err != nil:
			outcome, kind = "error: "+c.err.Error(), "error"
		case c.res.TimedOut:
			outcome, kind = "timed out, as the skill's 3 s timeout says", "timed out"
		case c.res.ExitCode != 0:
			outcome, kind = fmt.Sprintf("exit %d: %s", c.res.ExitCode, strings.TrimSpace(c.res.Output)), fmt.Sprintf("exit %d", c.res.ExitCode)
		default:
			outcome, kind = strings.ReplaceAll(strings.TrimSpace(c.res.Output), "\n", " / "), "ok"
		}
		tally[c.tool+": "+kind]++
		// The run report names its worker; a call that failed before a
		// result has none, and the workers' own records say.
		where := "?"
		if c.res != nil && c.res.Worker != "" {
			where = c.res.Worker
		}
		for _, w := range f.workers {
			if where == "?" && w.Ran(c.runID) {
				where = w.Name()
			}
		}
		fmt.Printf("%3d %-6s on %-9s %6.2fs  %s\n", c.n, c.tool, where, c.took.Seconds(), outcome)
	}
	written, _ := filepath.Glob(filepath.Join(f.out, "out-*.txt"))
	fmt.Printf("\n%d calls in %.1fs; %d files written back through the host\n", nCalls, wall.Seconds(), len(written))
	for _, w := range f.workers {
		fmt.Printf("%s ran %d\n", w.Name(), w.Jobs())
	}
	keys := make([]string, 0, len(tally))
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-28s %d\n", k, tally[k])
	}
	return f.metricsSummary()
}

// metricsSummary prints what each worker's /metrics says of its runs,
// its skill cache and its local plugin, as Prometheus would scrape it.
func (f *fleet) metricsSummary() error {
	fmt.Println("\nworkers' metrics (GET /metrics):")
	fmt.Printf("  %-9s %7s %9s %6s %7s %6s %10s %14s %11s %8s\n", "worker", "started", "completed", "failed", "refused", "active",
		"mean run s", "cache hit/miss", "cache bytes", "restarts")
	for _, w := range f.workers {
		m, err := scrape(w.MetricsAddr())
		if err != nil {
			return fmt.Errorf("%s: %w", w.Name(), err)
		}
		mean := 0.0
		if n := m["skillhost_worker_run_duration_seconds_count"]; n > 0 {
			mean = m["skillhost_worker_run_duration_seconds_sum"] / n
		}
		p := "skillhost_worker_"
		cache := fmt.Sprintf("%.0f/%.0f", m[p+"skill_cache_hits_total"], m[p+"skill_cache_misses_total"])
		fmt.Printf("  %-9s %7.0f %9.0f %6.0f %7.0f %6.0f %10.2f %14s %11.0f %8.0f\n", w.Name(), m[p+"runs_started_total"],
			m[p+"runs_completed_total"], m[p+"runs_failed_total"], m[p+"runs_refused_total"], m[p+"runs_active"], mean,
			cache, m[p+"skill_cache_bytes"], m[p+"plugin_restarts_total"])
	}
	return nil
}

// scrape reads the series without labels of the /metrics at addr.
func scrape(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if v, err := strconv.ParseFloat(value, 64); ok && err == nil && !strings.HasPrefix(name, "#") {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// benchmark measures, in one run, the per-call overhead of a remote run
// against the same run local, and the throughput of 1, 2 and 4 workers,
// each a process of its own.
func benchmark(bin string) error {
	fmt.Println("| case | calls | concurrency | wall s | calls/s | median ms | errors | lost or mixed up |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, workers := range []int{1, 2, 4} {
		f, err := start(workers, bin, true)
		if err != nil {
			return err
		}
		if workers == 1 {
			for _, strategy := range []string{"landlock", "temporal"} {
				row(f, fmt.Sprintf("sequential, %s", strategy), 30, 1, strategy, "fast")
			}
		}
		row(f, fmt.Sprintf("%d workers", workers), 100, 16, "", "fast")
		if workers == 4 {
			before := descendants()
			row(f, "4 workers, 500 calls", 500, 32, "", "fast")
			time.Sleep(time.Second) // runs' supervisors exit just after their results
			fmt.Printf("\nprocesses below this one: %d before the 500 calls, %d after\n", before, descendants())
		}
		f.stop()
	}
	return nil
}

// row makes n calls of tool at concurrency c and prints a table row,
// checking that each call got its own answer.
func row(f *fleet, label string, n, c int, strategy, tool string) {
	out := make([]time.Duration, n)
	var bad, errs atomic.Int64
	start := time.Now()
	each(n, c, func(i int) {
		t := time.Now()
		res, err := f.h.Run(context.Background(), host.RunRequest{Skill: "fleet-demo", Tool: tool, Args: []string{fmt.Sprint(i)}, Strategy: strategy}, nil)
		out[i] = time.Since(t)
		switch {
		case err != nil:
			errs.Add(1)
		case res.Output != fmt.Sprintf("fast %d\n", i):
			bad.Add(1)
		}
	})
	wall := time.Since(start)
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	fmt.Printf("| %s | %d | %d | %.2f | %.1f | %.0f | %d | %d |\n", label, n, c, wall.Seconds(), float64(n)/wall.Seconds(),
		float64(out[n/2].Microseconds())/1000, errs.Load(), bad.Load())
}

// descendants counts the processes below this one (the workers' local
// plugins and what they keep ready): a run that leaked one would show.
func descendants() int {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procstat.Read(pid); err == nil {
			parent[pid] = st.PPid
		}
	}
	me, n := os.Getpid(), 0
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == me {
				n++
				break
			}
		}
	}
	return n
}
