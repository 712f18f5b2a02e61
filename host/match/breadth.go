package match

import (
	"context"
	_ "embed"
	"hash/fnv"
	"math"
	"runtime"
	"strings"
	"sync"
)

// breadthThreshold is the score at which a background message counts as
// matching a skill when its breadth is measured: the default threshold
// before the breadth factor lowered it. It is fixed, not the configured
// threshold, so a skill's breadth is the same whatever a user sets
// match.threshold to.
const breadthThreshold = 0.2125

//go:embed background.txt
var builtinBackground string

// DefaultBackground returns the background messages built into the
// binary: 1,990 of the 7,840 messages of tools/matchlab/tune written for
// 1,960 published skills (a quarter, picked by a hash of their text), none
// of them for the skills of the labelled sets the defaults were chosen
// on. tools/matchlab background writes the file from those messages.
var DefaultBackground = sync.OnceValue(func() []string {
	var out []string
	for line := range strings.Lines(builtinBackground) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
})

// WriteBackground writes messages in the form DefaultBackground reads: a
// comment line, then one message per line, its white space runs made one
// space. An empty message, or one that starts with "#" (it would read as
// a comment), is left out; none of the built-in messages is.
func WriteBackground(messages []string) string {
	var b strings.Builder
	b.WriteString("# skillhost background messages for the breadth factor: one per line\n")
	for _, m := range messages {
		if m = oneLine(m); m != "" && !strings.HasPrefix(m, "#") {
			b.WriteString(m)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// InBackground reports whether a message written for a skill belongs to
// the background: a quarter of such messages, those whose FNV-1a hash (of
// the message with its white space runs made one space) is 0 modulo 4.
// The hash picks them without looking at what they give. The other three
// quarters are the requests lent to skills (DefaultExamples).
func InBackground(message string) bool {
	h := fnv.New32a()
	h.Write([]byte(oneLine(message)))
	return h.Sum32()%4 == 0
}

// breadths are the skills' breadths under o: from o.BreadthCache when it
// holds them for the skills whose fields hash to fields, else measured
// (and then stored there). It fails only when ctx ends first.
func (idx *lexIndex) breadths(ctx context.Context, o LexicalOptions, fields []byte) ([]float64, error) {
	if idx.n == 0 {
		return nil, nil
	}
	var key string
	if o.BreadthCache != nil {
		if key = breadthKey(o, fields); key != "" {
			if b, ok := o.BreadthCache.Load(key); ok && validBreadths(b, idx.n) {
				return b, nil
			}
		}
	}
	bg := o.Background
	if bg == nil {
		bg = DefaultBackground()
	}
	b, err := idx.measureBreadth(ctx, o, bg)
	if err != nil {
		return nil, err
	}
	if key != "" {
		o.BreadthCache.Store(key, b)
	}
	return b, nil
}

// measureBreadth returns, for each skill of idx, the share of messages
// that score at least breadthThreshold for it, scored as a message would
// be with every factor of o but breadth itself, in this catalog (so a
// skill's breadth depends on the other skills too, through each term's
// idf). Messages are shared out among the processors; the counts, and so
// the result, do not depend on how. It stops with ctx's error when ctx
// ends first.
func (idx *lexIndex) measureBreadth(ctx context.Context, o LexicalOptions, messages []string) ([]float64, error) {
	shares := make([]float64, idx.n)
	if len(messages) == 0 || idx.n == 0 {
		return shares, nil
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(messages)/256))
	counts := make([][]int32, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]int32, idx.n)
			m := newMemo()
			for k := w; k < len(messages); k += workers {
				if ctx.Err() != nil {
					return
				}
				scores, _ := idx.score(o, messages[k], m, false)
				for i, s := range scores {
					if s >= breadthThreshold {
						c[i]++
					}
				}
			}
			counts[w] = c
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, c := range counts {
		for i, k := range c {
			shares[i] += float64(k)
		}
	}
	for i := range shares {
		shares[i] /= float64(len(messages))
	}
	return shares, nil
}

// breadthFactor is the factor a skill of breadth b gets at strength s and
// centre c: min(1, c/b)^s, so a skill no broader than c keeps its evidence.
func breadthFactor(b, s, c float64) float64 {
	if s <= 0 || b <= c {
		return 1
	}
	return math.Pow(c/b, s)
}
