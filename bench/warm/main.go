//go:build linux

// Command warm measures warm tool calls: it starts `skillhost mcp` once per
// case, calls one tool many times over stdio, and reports per call the
// wall time (median and p90) and the CPU time of the whole server tree (the
// server, its plugin, and every process either reaped), next to the same
// script run by a bare fork and exec from here. The difference is what a
// warm MCP call costs on top of running the script.
//
//	warm -calls 200 -script skills/echo/scripts/hi.sh -tool echo__hi \
//	    -case 'null=bin/skillhost --config c.yaml mcp --strategy null --tools all'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
	label     string
	cpu       float64 // ms per call
	p50, p90  float64 // ms
	callsDone int
}

func main() {
	var cases multi
	calls := flag.Int("calls", 200, "measured calls per case")
	warm := flag.Int("warmup", 10, "unmeasured calls first")
	script := flag.String("script", "", "the tool's script, run bare for the reference")
	tool := flag.String("tool", "", "tool to call")
	flag.Var(&cases, "case", "LABEL=COMMAND starting an MCP server on stdio (repeatable)")
	flag.Parse()
	if *script == "" || *tool == "" || len(cases) == 0 {
		fmt.Fprintln(os.Stderr, "warm: -script, -tool and at least one -case are needed")
		os.Exit(2)
	}
	results := []result{bare(*script, *calls, *warm)}
	for _, c := range cases {
		label, cmd, ok := strings.Cut(c, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "warm: -case %q: want LABEL=COMMAND\n", c)
			os.Exit(2)
		}
		r, err := viaMCP(label, strings.Fields(cmd), *tool, *calls, *warm)
		if err != nil {
			fmt.Fprintf(os.Stderr, "warm: %s: %v\n", label, err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	fmt.Println("| case | CPU ms per call | over bare, CPU ms | wall ms p50 | wall ms p90 | over bare, wall ms p50 |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r.label, r.cpu, r.cpu-results[0].cpu, r.p50, r.p90, r.p50-results[0].p50)
	}
	fmt.Printf("\n%d calls per case after %d unmeasured ones; CPU of the whole tree from /proc and getrusage.\n", *calls, *warm)
}

// bare runs script by fork and exec, as the reference.
func bare(script string, calls, warm int) result {
	var times []time.Duration
	var before syscall.Rusage
	for i := 0; i < warm+calls; i++ {
		if i == warm {
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
		}
		start := time.Now()
		if err := exec.Command(script).Run(); err != nil {
			fmt.Fprintf(os.Stderr, "warm: bare %s: %v\n", script, err)
			os.Exit(1)
		}
		if i >= warm {
			times = append(times, time.Since(start))
		}
	}
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
	cpu := tv(after.Utime) + tv(after.Stime) - tv(before.Utime) - tv(before.Stime)
	return summarise("bare exec", cpu, times)
}

func tv(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }

// viaMCP starts the server, calls tool, and measures.
func viaMCP(label string, argv []string, tool string, calls, warm int) (result, error) {
	ctx := context.Background()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "skillhost-bench", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return result{}, fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	var times []time.Duration
	var cpu0 time.Duration
	for i := 0; i < warm+calls; i++ {
		if i == warm {
			cpu0 = treeCPU(cmd.Process.Pid)
		}
		start := time.Now()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			return result{}, fmt.Errorf("call %d: %w", i, err)
		}
		if res.IsError {
			return result{}, fmt.Errorf("call %d: the tool failed: %+v", i, res.Content)
		}
		if i >= warm {
			times = append(times, time.Since(start))
		}
	}
	return summarise(label, treeCPU(cmd.Process.Pid)-cpu0, times), nil
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

func summarise(label string, cpu time.Duration, times []time.Duration) result {
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return result{label: label, cpu: ms(cpu) / float64(len(times)), p50: ms(times[len(times)/2]), p90: ms(times[len(times)*9/10]), callsDone: len(times)}
}
