// Command oneshot measures whole commands side by side: every round runs
// each case once, in a rotating order, so that a machine that gets busier or
// quieter during the run shifts all cases alike. It reports, per case, the
// median and range of CPU time (user + system of the process and every
// descendant it waited for, which stays meaningful on a busy machine) and of
// wall time, and ratios against reference cases computed within each round.
//
//	oneshot -rounds 30 -case 'bash=bash s.sh' -case 'bwrap=bwrap ... bash s.sh' -ref bash -ref bwrap
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
}

func main() {
	var cases, refs multi
	rounds := flag.Int("rounds", 20, "rounds; each runs every case once")
	warm := flag.Int("warmup", 2, "unrecorded rounds first (page cache, binaries)")
	check := flag.String("expect", "", "output every case must print (checks that each case really works)")
	flag.Var(&cases, "case", "LABEL=COMMAND (repeatable)")
	flag.Var(&refs, "ref", "label of a case to give ratios against (repeatable)")
	flag.Parse()
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
	for i := 0; i < *warm+*rounds; i++ {
		for j := range cs {
			c := cs[(i+j)%len(cs)] // rotate who goes first
			cpu, wall, err := runOnce(c.argv, *check)
			if err != nil {
				fmt.Fprintf(os.Stderr, "oneshot: %s: %v\n", c.label, err)
				os.Exit(1)
			}
			if i >= *warm {
				c.cpu = append(c.cpu, cpu)
				c.wall = append(c.wall, wall)
			}
		}
	}
	fmt.Printf("| case | CPU ms median (min–max) | wall ms median (min–max) |")
	for _, r := range refs {
		fmt.Printf(" CPU ÷ %s | wall ÷ %s |", r, r)
	}
	fmt.Println()
	fmt.Print("|---|---|---|")
	for range refs {
		fmt.Print("---|---|")
	}
	fmt.Println()
	for _, c := range cs {
		fmt.Printf("| %s | %s | %s |", c.label, summary(c.cpu), summary(c.wall))
		for _, r := range refs {
			ref := find(cs, r)
			fmt.Printf(" %s | %s |", ratio(c.cpu, ref.cpu), ratio(c.wall, ref.wall))
		}
		fmt.Println()
	}
	fmt.Printf("\n%d rounds (after %d warm-up rounds), cases interleaved in rotating order; ratios are medians of per-round ratios.\n", *rounds, *warm)
}

func find(cs []*testCase, label string) *testCase {
	for _, c := range cs {
		if c.label == label {
			return c
		}
	}
	return nil
}

// runOnce runs argv and returns its CPU and wall time in milliseconds.
func runOnce(argv []string, expect string) (cpu, wall float64, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout = &out
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	err = cmd.Run()
	wall = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, tail(errOut.Bytes()))
	}
	if expect != "" && !strings.Contains(out.String(), expect) {
		return 0, 0, fmt.Errorf("output %q does not contain %q", tail(out.Bytes()), expect)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	return cpu, wall, nil
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
