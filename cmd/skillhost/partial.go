package main

import (
	"io"
	"strings"
)

// outputSoFar keeps a run's output as the pieces its events carried, for
// a run that ends in an error or an interrupt, whose report has none. The
// pieces are the events' own strings: keeping them copies nothing, where
// one growing buffer would copy the output again at every doubling and,
// for an output of 100 MiB, hold several times that at once.
type outputSoFar struct {
	parts []string // none empty
}

func (o *outputSoFar) add(s string) {
	if s != "" {
		o.parts = append(o.parts, s)
	}
}

func (o *outputSoFar) empty() bool { return len(o.parts) == 0 }

func (o *outputSoFar) writeTo(w io.Writer) {
	for _, p := range o.parts {
		if _, err := io.WriteString(w, p); err != nil {
			return
		}
	}
}

func (o *outputSoFar) String() string { return strings.Join(o.parts, "") }

func (o *outputSoFar) endsInNewline() bool {
	return !o.empty() && strings.HasSuffix(o.parts[len(o.parts)-1], "\n")
}
