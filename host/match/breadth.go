package match

import (
	"context"
	"math"
	"sync"

	"github.com/skillhost/skillhost/internal/matchtext"
	"github.com/skillhost/skillhost/internal/procs"
)

// breadthThreshold is the score at which a background message counts as
// matching a skill when its breadth is measured: the default threshold
// before the breadth factor lowered it. It is fixed, not the configured
// threshold, so a skill's breadth is the same whatever a user sets
// match.threshold to.
const breadthThreshold = 0.2125

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
		bg = matchtext.DefaultBackground()
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
	workers, done := procs.Workers(len(messages) / 256)
	defer done()
	counts := make([][]int32, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]int32, idx.n)
			m := matchtext.NewMemo()
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
