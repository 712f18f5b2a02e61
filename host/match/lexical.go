package match

import (
	"context"
	"math"
	"sync"
)

// LexicalOptions tune the lexical matcher; zero values take the defaults,
// which were set on the labelled set in testdata/match.
type LexicalOptions struct {
	// K1 and B are BM25's term-frequency saturation and length
	// normalisation.
	K1, B float64
	// NameWeight, DescriptionWeight and BodyWeight scale a term's
	// frequency by the field it occurs in (BM25F).
	NameWeight, DescriptionWeight, BodyWeight float64
	// UnknownWeight scales the weight of message terms no skill contains;
	// they count against every skill, so that an off-topic message scores
	// low however it happens to brush a skill's vocabulary.
	UnknownWeight float64
}

// DefaultLexicalThreshold is the lexical matcher's default minimum score.
const DefaultLexicalThreshold = 0.30

func (o LexicalOptions) withDefaults() LexicalOptions {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.K1, 1.2)
	def(&o.B, 0.5)
	def(&o.NameWeight, 3)
	def(&o.DescriptionWeight, 1.5)
	def(&o.BodyWeight, 0.5)
	def(&o.UnknownWeight, 0.6)
	return o
}

// Lexical ranks skills by BM25F over their name, description and
// instructions, normalised into [0, 1]: a message scores the share of its
// terms' weight (idf) that a skill explains, each term counting by BM25's
// saturated frequency. Identical scores mean the same thing for any
// message, so a fixed threshold can reject messages no skill fits.
type Lexical struct {
	opts LexicalOptions
	mu   sync.RWMutex
	idx  *lexIndex
}

type posting struct {
	doc int
	tf  float64 // field-weighted term frequency
}

type lexIndex struct {
	n        int
	docLen   []float64
	avgLen   float64
	postings map[string][]posting
}

// NewLexical returns a lexical matcher.
func NewLexical(opts LexicalOptions) *Lexical { return &Lexical{opts: opts.withDefaults()} }

// Index implements Matcher.
func (l *Lexical) Index(_ context.Context, docs []Doc) error {
	idx := &lexIndex{n: len(docs), docLen: make([]float64, len(docs)), postings: map[string][]posting{}}
	o := l.opts
	var total float64
	for i, d := range docs {
		tf := map[string]float64{}
		for _, f := range []struct {
			text   string
			weight float64
		}{{d.Name, o.NameWeight}, {d.Description, o.DescriptionWeight}, {d.Body, o.BodyWeight}} {
			for _, t := range Tokens(f.text) {
				tf[t] += f.weight
				idx.docLen[i] += f.weight
			}
		}
		for t, v := range tf {
			idx.postings[t] = append(idx.postings[t], posting{doc: i, tf: v})
		}
		total += idx.docLen[i]
	}
	if len(docs) > 0 {
		idx.avgLen = total / float64(len(docs))
	}
	l.mu.Lock()
	l.idx = idx
	l.mu.Unlock()
	return nil
}

// idf is BM25's inverse document frequency, always positive.
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Score implements Matcher.
func (l *Lexical) Score(_ context.Context, message string) ([]float64, error) {
	l.mu.RLock()
	idx := l.idx
	l.mu.RUnlock()
	if idx == nil || idx.n == 0 {
		return nil, nil
	}
	o := l.opts
	scores := make([]float64, idx.n)
	seen := map[string]bool{}
	var total float64
	for _, t := range Tokens(message) {
		if seen[t] {
			continue
		}
		seen[t] = true
		plist := idx.postings[t]
		if len(plist) == 0 {
			total += o.UnknownWeight * idf(idx.n, 0)
			continue
		}
		w := idf(idx.n, len(plist))
		total += w
		for _, p := range plist {
			norm := o.K1 * (1 - o.B + o.B*idx.docLen[p.doc]/idx.avgLen)
			scores[p.doc] += w * p.tf / (p.tf + norm)
		}
	}
	if total == 0 {
		return scores, nil
	}
	for i := range scores {
		scores[i] /= total
	}
	return scores, nil
}
