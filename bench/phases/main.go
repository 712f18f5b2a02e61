// Command phases runs commands that print SKILLHOST_TRACE=timing lines
// (skillhost run) many times, interleaved, and writes a Markdown table of
// the median wall and CPU milliseconds of each phase, one column pair per
// command, phases in the order they happen.
//
//	phases -rounds 25 -case 'before=/tmp/base/skillhost run echo hi' -case 'after=bin/skillhost run echo hi'
//
// A case is LABEL=COMMAND; COMMAND is split on blanks (no quoting). Each
// command runs with SKILLHOST_TRACE=timing added to this environment.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

// samples are one case's measurements: phase name to wall and CPU values.
type samples struct {
	label string
	argv  []string
	wall  map[string][]float64
	cpu   map[string][]float64
}

func main() {
	var cases multi
	rounds := flag.Int("rounds", 25, "rounds; each runs every case once")
	warm := flag.Int("warmup", 2, "unrecorded rounds first")
	flag.Var(&cases, "case", "LABEL=COMMAND (repeatable)")
	flag.Parse()
	var cs []*samples
	for _, c := range cases {
		label, cmd, ok := strings.Cut(c, "=")
		if !ok || strings.TrimSpace(cmd) == "" {
			fmt.Fprintf(os.Stderr, "phases: -case %q: want LABEL=COMMAND\n", c)
			os.Exit(2)
		}
		cs = append(cs, &samples{label: label, argv: strings.Fields(cmd), wall: map[string][]float64{}, cpu: map[string][]float64{}})
	}
	if len(cs) == 0 {
		fmt.Fprintln(os.Stderr, "phases: no -case given")
		os.Exit(2)
	}
	var order []string
	seen := map[string]bool{}
	for i := 0; i < *warm+*rounds; i++ {
		for j := range cs {
			c := cs[(i+j)%len(cs)]
			lines, err := trace(c.argv)
			if err != nil {
				fmt.Fprintf(os.Stderr, "phases: %s: %v\n", c.label, err)
				os.Exit(1)
			}
			if i < *warm {
				continue
			}
			prev := ""
			for _, l := range lines {
				if !seen[l.phase] {
					seen[l.phase] = true
					order = insertAfter(order, prev, l.phase)
				}
				prev = l.phase
				if l.wall >= 0 {
					c.wall[l.phase] = append(c.wall[l.phase], l.wall)
				}
				if l.cpu >= 0 {
					c.cpu[l.phase] = append(c.cpu[l.phase], l.cpu)
				}
			}
		}
	}
	fmt.Print(table(cs, order))
	fmt.Printf("\nMedians of %d rounds (after %d warm-up rounds), cases interleaved.\n", *rounds, *warm)
}

// insertAfter puts phase right after prev in order (first if prev is ""),
// so that phases only some cases have (a plugin started two ways) sit
// where they happen among the others.
func insertAfter(order []string, prev, phase string) []string {
	at := 0
	for i, p := range order {
		if p == prev {
			at = i + 1
			break
		}
	}
	return append(order[:at], append([]string{phase}, order[at:]...)...)
}

type line struct {
	phase     string
	wall, cpu float64 // -1: not given
}

// trace runs argv once and returns its timing lines.
func trace(argv []string) ([]line, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "SKILLHOST_TRACE=timing")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	var out []line
	for _, s := range strings.Split(stderr.String(), "\n") {
		rest, ok := strings.CutPrefix(s, "timing: ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 3 || f[0] == "phase" {
			continue
		}
		out = append(out, line{phase: strings.Join(f[:len(f)-2], " "), wall: num(f[len(f)-2]), cpu: num(f[len(f)-1])})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no timing lines (is it a skillhost run?): %s", stderr.String())
	}
	return out, nil
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	return v
}

func median(v []float64) string {
	if len(v) == 0 {
		return ""
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return fmt.Sprintf("%.2f", s[len(s)/2])
}

func table(cs []*samples, order []string) string {
	var b strings.Builder
	b.WriteString("| phase |")
	for _, c := range cs {
		fmt.Fprintf(&b, " %s wall ms | %s CPU ms |", c.label, c.label)
	}
	b.WriteString("\n|---|")
	for range cs {
		b.WriteString("---|---|")
	}
	b.WriteString("\n")
	for _, p := range order {
		fmt.Fprintf(&b, "| %s |", p)
		for _, c := range cs {
			fmt.Fprintf(&b, " %s | %s |", median(c.wall[p]), median(c.cpu[p]))
		}
		b.WriteString("\n")
	}
	return b.String()
}
