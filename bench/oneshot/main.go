//go:build unix

// Command oneshot measures whole commands side by side: every round runs
// each case once, in a rotating order, so that a machine that gets busier or
// quieter during the run shifts all cases alike. It reports, per case, the
// median and range of CPU time (user + system of every process of the
// command's tree, which stays meaningful on a busy machine) and of wall
// time, and ratios against reference cases computed within each round.
//
// On Linux oneshot is the subreaper of what it runs: a process whose parent
// exits without waiting for it (bwrap's namespace init, a plugin that
// outlives its host) is reaped here and its CPU counted with the case.
// Wall time ends when the command itself exits.
//
//	oneshot -rounds 30 -case 'bash=bash s.sh' -case 'bwrap=bwrap ... bash s.sh' -ref bash -ref bwrap
//	oneshot -cases cases.txt -ref bash
//
// A case is LABEL=COMMAND; COMMAND is split on blanks (no quoting). The
// output is a Markdown table on stdout.
package main

import (
	"bytes"
	"flag"
	"fmt"

	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

type testCase struct {
	label string
	argv  []string
	cpu   []float64 // ms
	wall  []float64 // ms
	rss   []float64 // MiB, largest process of the tree
}

func main() {
	var cases, refs multi
	rounds := flag.Int("rounds", 20, "rounds; each runs every case once")
	warm := flag.Int("warmup", 2, "unrecorded rounds first (page cache, binaries)")
	check := flag.String("expect", "", "output every case must print (checks that each case really works)")
	outBytes := flag.Int64("bytes", 0, "bytes each case must print; adds a MiB/s column")
	flag.Var(&cases, "case", "LABEL=COMMAND (repeatable)")
	casesFile := flag.String("cases", "", "file of LABEL=COMMAND lines, run after the -case ones")
	flag.Var(&refs, "ref", "label of a case to give ratios against (repeatable)")
	flag.Parse()
	if *casesFile != "" {
		data, err := os.ReadFile(*casesFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "oneshot: %v\n", err)
			os.Exit(2)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) != "" {
				cases = append(cases, line)
			}
		}
	}
	var cs []*testCase
	for _, c := range cases {
		label, cmd, ok := strings.Cut(c, "=")
		if !ok || strings.TrimSpace(cmd) == "" {
			fmt.Fprintf(os.Stderr, "oneshot: -case %q: want LABEL=COMMAND\n", c)
			os.Exit(2)
		}
		cs = append(cs, &testCase{label: label, argv: strings.Fields(cmd)})
	}
	for _, r := range refs {
		if find(cs, r) == nil {
			fmt.Fprintf(os.Stderr, "oneshot: -ref %q names no case\n", r)
			os.Exit(2)
		}
	}
	if err := adoptOrphans(); err != nil {
		fmt.Fprintf(os.Stderr, "oneshot: %v\n", err)
		os.Exit(1)
	}
	for i := 0; i < *warm+*rounds; i++ {
		for j := range cs {
			c := cs[(i+j)%len(cs)] // rotate who goes first
			cpu, wall, rss, err := runOnce(c.argv, *check, *outBytes)
			if err != nil {
				fmt.Fprintf(os.Stderr, "oneshot: %s: %v\n", c.label, err)
				os.Exit(1)
			}
			if i >= *warm {
				c.cpu = append(c.cpu, cpu)
				c.wall = append(c.wall, wall)
				c.rss = append(c.rss, rss)
			}
		}
	}
	fmt.Printf("| case | CPU ms median (min–max) | wall ms median (min–max) | peak RSS MiB |")
	if *outBytes > 0 {
		fmt.Print(" MiB/s (wall) |")
	}
	for _, r := range refs {
		fmt.Printf(" CPU ÷ %s | wall ÷ %s |", r, r)
	}
	fmt.Println()
	fmt.Print("|---|---|---|---|")
	if *outBytes > 0 {
		fmt.Print("---|")
	}
	for range refs {
		fmt.Print("---|---|")
	}
	fmt.Println()
	for _, c := range cs {
		fmt.Printf("| %s | %s | %s | %.0f |", c.label, summary(c.cpu), summary(c.wall), median(c.rss))
		if *outBytes > 0 {
			fmt.Printf(" %.0f |", float64(*outBytes)/(1<<20)/(median(c.wall)/1000))
		}
		for _, r := range refs {
			ref := find(cs, r)
			fmt.Printf(" %s | %s |", ratio(c.cpu, ref.cpu), ratio(c.wall, ref.wall))
		}
		fmt.Println()
	}
	fmt.Printf("\n%d rounds (after %d warm-up rounds), cases interleaved in rotating order; ratios are medians of per-round ratios.", *rounds, *warm)
	if orphansCounted {
		fmt.Print(" CPU counts every process of a case's tree, those that outlived their parent too.")
	}
	fmt.Println()
}

func find(cs []*testCase, label string) *testCase {
	for _, c := range cs {
		if c.label == label {
			return c
		}
	}
	return nil
}

// countWriter counts what it is given and keeps the first bytes.
type countWriter struct {
	n    int64
	head bytes.Buffer
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if room := 4096 - w.head.Len(); room > 0 {
		w.head.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// orphanLimit is how long a case's orphans may run on after the command
// exits before the case counts as failed.
var orphanLimit = 30 * time.Second

// runOnce runs argv and returns its CPU and wall time in milliseconds and
// the peak RSS in MiB of the largest process of its tree.
func runOnce(argv []string, expect string, wantBytes int64) (cpu, wall, rss float64, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var out countWriter
	cmd.Stdout = &out
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	err = cmd.Run()
	wall = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%v: %s", err, tail(errOut.Bytes()))
	}
	if expect != "" && !strings.Contains(out.head.String(), expect) {
		return 0, 0, 0, fmt.Errorf("output %q does not contain %q", tail(out.head.Bytes()), expect)
	}
	if wantBytes > 0 && out.n != wantBytes {
		return 0, 0, 0, fmt.Errorf("printed %d bytes, want %d", out.n, wantBytes)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	orphanCPU, orphanRSS, err := reapOrphans(orphanLimit)
	if err != nil {
		return 0, 0, 0, err
	}
	cpu = float64(ru.Utime.Nano()+ru.Stime.Nano())/1e6 + orphanCPU
	return cpu, wall, max(float64(ru.Maxrss)/1024, orphanRSS), nil
}

func tail(b []byte) string {
	if len(b) > 300 {
		b = b[len(b)-300:]
	}
	return strings.TrimSpace(string(b))
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func summary(v []float64) string {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return fmt.Sprintf("%.1f (%.1f–%.1f)", median(s), s[0], s[len(s)-1])
}

func ratio(a, b []float64) string {
	r := make([]float64, len(a))
	for i := range a {
		if b[i] <= 0 {
			r[i] = 0
			continue
		}
		r[i] = a[i] / b[i]
	}
	m := median(r)
	if m >= 10 {
		return fmt.Sprintf("%.0f×", m)
	}
	return fmt.Sprintf("%.1f×", m)
}
