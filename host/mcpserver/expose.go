package mcpserver

import (
	"bufio"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// expositionType is the Content-Type of the Prometheus text exposition
// format, version 0.0.4, which every Prometheus-compatible scraper reads.
const expositionType = "text/plain; version=0.0.4; charset=utf-8"

// family is one metric family as the text format writes it: a HELP line,
// a TYPE line (counter, gauge, histogram or summary) and its samples.
type family struct {
	name, help, typ string
	samples         []sample
}

// sample is one line of a family: the family's name with suffix
// ("_bucket", "_sum", "_count" or none), labels in the order written, and
// the value.
type sample struct {
	suffix string
	labels []label
	value  float64
}

type label struct{ name, value string }

// writeFamilies writes fams in the text exposition format, sorted by
// name, as a registry gathers them; a family without samples (a labelled
// metric nothing has counted yet) is left out.
func writeFamilies(w io.Writer, fams []family) error {
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		if len(f.samples) == 0 {
			continue
		}
		bw.WriteString("# HELP " + f.name + " " + escapeHelp(f.help) + "\n")
		bw.WriteString("# TYPE " + f.name + " " + f.typ + "\n")
		for _, s := range f.samples {
			bw.WriteString(f.name + s.suffix)
			for i, l := range s.labels {
				if i == 0 {
					bw.WriteByte('{')
				} else {
					bw.WriteByte(',')
				}
				bw.WriteString(l.name + `="` + escapeLabel(l.value) + `"`)
			}
			if len(s.labels) > 0 {
				bw.WriteByte('}')
			}
			bw.WriteString(" " + formatValue(s.value) + "\n")
		}
	}
	return bw.Flush()
}

// helpEscaper escapes a HELP text: a backslash and a line feed;
// labelEscaper a label value: a backslash, a double quote and a line feed.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// formatValue writes a sample value or a bucket bound: the shortest
// decimal that reads back as v, or +Inf, -Inf, NaN.
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// gauge is a family of one unlabelled sample.
func gauge(name, help string, v float64) family {
	return family{name: name, help: help, typ: "gauge", samples: []sample{{value: v}}}
}

// counter is a family of one unlabelled sample of a counter.
func counter(name, help string, v float64) family {
	return family{name: name, help: help, typ: "counter", samples: []sample{{value: v}}}
}
