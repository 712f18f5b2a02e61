//go:build linux

// Command warm measures warm tool calls: it starts `skillhost mcp` once per
// case, calls one tool many times over stdio, and reports per call the
// wall time (median and p90) and the CPU time of the whole server tree (the
// server, its plugin, and every process either reaped), next to the same
// script run by a bare fork and exec from here. The difference is what a
// warm MCP call costs on top of running the script. The calls are made in
// rounds, every case (the bare exec too) a batch per round in rotating
// order, so that a machine that slows down slows every case alike (the
// kernel counts a live process's CPU in 10 ms ticks: keep batches long);
// -ratio compares two cases' costs over the bare exec.
//
//	warm -calls 800 -rounds 20 -script skills/echo/scripts/hi.sh -tool echo__hi \
//	    -case 'null=bin/skillhost --config c.yaml mcp --strategy null --tools all'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/shared/procstat"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

type result struct {
	label    string
	cpu      float64 // ms per call, over every round
	over     float64 // ms per call over the bare exec's
	p50, p90 float64 // ms, over every call
}

// runner makes a batch of calls of one case and says what they cost.
type runner struct {
	label string
	batch func(n int) (cpu time.Duration, times []time.Duration, err error)
	close func()
	// per round: CPU ms per call; and every call's wall time
	cpu   []float64
	total time.Duration // CPU of every measured batch
	calls int
	times []time.Duration
}

func main() {
	var cases, ratios multi
	calls := flag.Int("calls", 200, "measured calls per case, shared out among the rounds")
	rounds := flag.Int("rounds", 10, "rounds; each makes calls/rounds calls of every case, in rotating order")
	warm := flag.Int("warmup", 10, "unmeasured calls of each case first")
	script := flag.String("script", "", "the tool's script, run bare for the reference")
	tool := flag.String("tool", "", "tool to call")
	flag.Var(&cases, "case", "LABEL=COMMAND starting an MCP server on stdio (repeatable)")
	flag.Var(&ratios, "ratio", "A/B: also give A's cost over the bare exec as a share of B's, per round (repeatable)")
	flag.Parse()
	if *script == "" || *tool == "" || len(cases) == 0 || *rounds < 1 || *calls < *rounds {
		fmt.Fprintln(os.Stderr, "warm: -script, -tool and at least one -case are needed, and -calls of at least -rounds")
		os.Exit(2)
	}
	labels := map[string]bool{}
	for _, c := range cases {
		label, _, _ := strings.Cut(c, "=")
		labels[label] = true
	}
	for _, q := range ratios {
		if a, b, _ := strings.Cut(q, "/"); !labels[a] || !labels[b] {
			fmt.Fprintf(os.Stderr, "warm: -ratio %q: want A/B, two labels of -case\n", q)
			os.Exit(2)
		}
	}
	runners := []*runner{bare(*script)}
	for _, c := range cases {
		label, cmd, ok := strings.Cut(c, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "warm: -case %q: want LABEL=COMMAND\n", c)
			os.Exit(2)
		}
		r, err := viaMCP(label, strings.Fields(cmd), *tool)
		if err != nil {
			fmt.Fprintf(os.Stderr, "warm: %s: %v\n", label, err)
			os.Exit(1)
		}
		defer r.close()
		runners = append(runners, r)
	}
	for _, r := range runners {
		if _, _, err := r.batch(*warm); err != nil {
			fmt.Fprintf(os.Stderr, "warm: %s: %v\n", r.label, err)
			os.Exit(1)
		}
	}
	per := *calls / *rounds
	for round := range *rounds {
		for i := range runners {
			r := runners[(i+round)%len(runners)]
			cpu, times, err := r.batch(per)
			if err != nil {
				fmt.Fprintf(os.Stderr, "warm: %s: %v\n", r.label, err)
				os.Exit(1)
			}
			r.cpu = append(r.cpu, ms(cpu)/float64(per))
			r.total += cpu
			r.calls += per
			r.times = append(r.times, times...)
		}
	}
	byLabel := map[string]*runner{}
	fmt.Println("| case | CPU ms per call | over bare, CPU ms | wall ms p50 | wall ms p90 | over bare, wall ms p50 |")
	fmt.Println("|---|---|---|---|---|---|")
	base := summarise(runners[0], runners[0])
	for _, r := range runners {
		byLabel[r.label] = r
		s := summarise(r, runners[0])
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", s.label, s.cpu, s.over, s.p50, s.p90, s.p50-base.p50)
	}
	for _, q := range ratios {
		a, b, _ := strings.Cut(q, "/")
		ra, rb := byLabel[a], byLabel[b]
		sa, sb := summarise(ra, runners[0]), summarise(rb, runners[0])
		// Each round's ratio, for the spread; the figure is of the totals,
		// since a round's CPU comes in the kernel's 10 ms ticks.
		var shares []float64
		for i := range ra.cpu {
			if d := rb.cpu[i] - runners[0].cpu[i]; d > 0 {
				shares = append(shares, (ra.cpu[i]-runners[0].cpu[i])/d)
			}
		}
		spread := "no round to compare"
		if len(shares) > 0 {
			spread = fmt.Sprintf("rounds %.2f–%.2f", slices.Min(shares), slices.Max(shares))
		}
		fmt.Printf("\n%s over the bare exec is %.2f× of %s's (%s)", a, sa.over/sb.over, b, spread)
	}
	if len(ratios) > 0 {
		fmt.Println()
	}
	fmt.Printf("\n%d rounds of %d calls per case, cases in rotating order, after %d unmeasured calls each; CPU of the whole tree from /proc and getrusage over every round, wall times over every call.\n", *rounds, per, *warm)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// bare runs script by fork and exec, as the reference.
func bare(script string) *runner {
	return &runner{label: "bare exec", close: func() {}, batch: func(n int) (time.Duration, []time.Duration, error) {
		var before, after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
		var times []time.Duration
		for range n {
			start := time.Now()
			if err := exec.Command(script).Run(); err != nil {
				return 0, nil, fmt.Errorf("bare %s: %w", script, err)
			}
			times = append(times, time.Since(start))
		}
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
		return tv(after.Utime) + tv(after.Stime) - tv(before.Utime) - tv(before.Stime), times, nil
	}}
}

func tv(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }

// viaMCP starts the server; its batches call tool.
func viaMCP(label string, argv []string, tool string) (*runner, error) {
	ctx := context.Background()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "skillhost-bench", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &runner{label: label, close: func() { session.Close() }, batch: func(n int) (time.Duration, []time.Duration, error) {
		cpu0 := treeCPU(cmd.Process.Pid)
		var times []time.Duration
		for i := range n {
			start := time.Now()
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			if err != nil {
				return 0, nil, fmt.Errorf("call %d: %w", i, err)
			}
			if res.IsError {
				return 0, nil, fmt.Errorf("call %d: the tool failed: %+v", i, res.Content)
			}
			times = append(times, time.Since(start))
		}
		// The plugin starts its next spare supervisor after each call; let
		// the last one finish starting, so that no batch leaves it to the
		// gap between batches, where none would count it.
		time.Sleep(50 * time.Millisecond)
		return treeCPU(cmd.Process.Pid) - cpu0, times, nil
	}}, nil
}

// treeCPU is the CPU time of pid, its live descendants, and every process
// they reaped.
func treeCPU(pid int) time.Duration {
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if st, err := procstat.Read(n); err == nil {
			parent[n] = st.PPid
		}
	}
	var total time.Duration
	for n := range parent {
		for a := n; a != 0 && a != 1; a = parent[a] {
			if a == pid {
				if st, err := procstat.Read(n); err == nil {
					total += st.CPU
				}
				break
			}
		}
	}
	return total
}

// summarise gives r's CPU per call over every round, and over ref's.
func summarise(r, ref *runner) result {
	times := slices.Clone(r.times)
	slices.Sort(times)
	cpu := ms(r.total) / float64(r.calls)
	return result{label: r.label, cpu: cpu, over: cpu - ms(ref.total)/float64(ref.calls), p50: ms(times[len(times)/2]), p90: ms(times[len(times)*9/10])}
}
