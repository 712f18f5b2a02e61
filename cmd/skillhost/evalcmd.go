package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/match"
)

// curveThresholds are where the calibration curve is sampled.
var curveThresholds = []float64{0.05, 0.1, 0.15, 0.2, 0.225, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6}

type missJSON struct {
	Line    int            `json:"line"`
	Message string         `json:"message"`
	Expect  string         `json:"expect,omitempty"`
	Rank    int            `json:"rank,omitempty"`
	Score   float64        `json:"score,omitempty"`
	Top     []match.Scored `json:"top"`
	// matched is whether the top skill reached the threshold, from the
	// unrounded score (Top's are rounded to four places, the threshold
	// need not be).
	matched bool
}

type evalJSON struct {
	Labels string          `json:"labels"`
	Skills int             `json:"skills"`
	At     match.Metrics   `json:"metrics"`
	Ranked match.Metrics   `json:"ranking_only"`
	Misses []missJSON      `json:"misses"`
	Curve  []match.Metrics `json:"curve"`
}

// evaluate measures the configured matcher on the catalog with the
// labelled messages in path (JSON Lines; see docs/matching.md).
func (a *app) evaluate(h *host.Host, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return usage(fmt.Errorf("--eval: %w", err))
	}
	defer f.Close()
	labels, err := match.ReadLabels(f, path)
	if err != nil {
		return usage(fmt.Errorf("--eval: %w", err))
	}
	h.CatalogWarnings()
	e, err := h.Matcher()
	if err != nil {
		return usage(err)
	}
	ev, err := match.Evaluate(context.Background(), e, labels, path)
	if err != nil {
		return usage(fmt.Errorf("--eval: %w", err))
	}
	th := e.Threshold()
	out := evalJSON{Labels: path, Skills: ev.Skills, At: round4(ev.At(th)), Ranked: round4(ev.At(0)), Misses: []missJSON{}}
	for _, m := range ev.Curve(append(curveThresholds, th)) {
		if len(out.Curve) > 0 && out.Curve[len(out.Curve)-1].Threshold == m.Threshold {
			continue
		}
		out.Curve = append(out.Curve, round4(m))
	}
	for _, o := range ev.Misses(th) {
		top := []match.Scored{}
		for _, s := range o.Top {
			top = append(top, match.Scored{Name: s.Name, Score: round(s.Score)})
		}
		out.Misses = append(out.Misses, missJSON{Line: o.Label.Line, Message: o.Label.Message, Expect: o.Label.Expect, Rank: o.Rank, Score: round(o.Score), Top: top,
			matched: len(o.Top) > 0 && o.Top[0].Score >= th})
	}
	if a.jsonOut {
		return a.printJSON(out)
	}
	m := out.At
	fmt.Fprintf(a.stdout, "%s: %d messages (%d on-topic, %d off-topic) against %d skills, threshold %s\n\n",
		path, m.Messages, m.OnTopic, m.OffTopic, ev.Skills, formatThreshold(th))
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tHit@1\tHit@3\tMRR\tabstain\tsilent")
	fmt.Fprintf(tw, "at the threshold\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", m.Hit1, m.Hit3, m.MRR, m.Abstain, m.Silent)
	r := out.Ranked
	fmt.Fprintf(tw, "ranking only\t%.3f\t%.3f\t%.3f\t-\t-\n", r.Hit1, r.Hit3, r.MRR)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, "\nabstain: off-topic messages that matched nothing; silent: on-topic messages that matched nothing")
	if len(out.Misses) > 0 {
		fmt.Fprintf(a.stdout, "\nmisses at the threshold (%d):\n", len(out.Misses))
		for _, ms := range out.Misses {
			got := "nothing"
			if ms.matched {
				got = fmt.Sprintf("%s (%.3f)", ms.Top[0].Name, ms.Top[0].Score)
			}
			want := "nothing"
			switch {
			case ms.Expect != "" && ms.Score == 0:
				want = ms.Expect + " (no score)"
			case ms.Expect != "":
				want = fmt.Sprintf("%s (rank %d, %.3f)", ms.Expect, ms.Rank, ms.Score)
			}
			fmt.Fprintf(a.stdout, "  %s:%d %q\n      want %s, got %s\n", path, ms.Line, oneLine(ms.Message, 90), want, got)
		}
	}
	fmt.Fprintln(a.stdout, "\ncalibration (threshold against Hit@1 and abstain):")
	tw = tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  threshold\tHit@1\tMRR\tabstain\tsilent")
	for _, c := range out.Curve {
		mark := ""
		if c.Threshold == th {
			mark = "  <- configured"
		}
		fmt.Fprintf(tw, "  %s\t%.3f\t%.3f\t%.3f\t%.3f%s\n", formatThreshold(c.Threshold), c.Hit1, c.MRR, c.Abstain, c.Silent, mark)
	}
	return tw.Flush()
}

// round4 rounds m's measures to four places; the threshold is kept as
// configured (0.18125 would not survive four places).
func round4(m match.Metrics) match.Metrics {
	for _, v := range []*float64{&m.Hit1, &m.Hit3, &m.MRR, &m.Abstain, &m.Silent} {
		*v = round(*v)
	}
	return m
}

// formatThreshold prints a threshold with as many places as it has, and
// at least two: 0.05, 0.20, 0.18125, 1.00.
func formatThreshold(th float64) string {
	s := strconv.FormatFloat(th, 'f', -1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) < 2 {
		frac += strings.Repeat("0", 2-len(frac))
	}
	return whole + "." + frac
}
