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
	// Saturation turns BM25F evidence e into a score e/(e+Saturation): the
	// evidence at which a skill scores 0.5.
	Saturation float64
}

// DefaultLexicalThreshold is the lexical matcher's default minimum score,
// chosen on the labelled set (see TestTune).
const DefaultLexicalThreshold = 0.30

func (o LexicalOptions) withDefaults() LexicalOptions {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.K1, 1.2)
	def(&o.B, 0.3)
	def(&o.NameWeight, 1)
	def(&o.DescriptionWeight, 1)
	def(&o.BodyWeight, 0.5)
	def(&o.Saturation, 1.25)
	return o
}

// Lexical ranks skills by BM25F over their name, description and
// instructions: each message term a skill contains adds its idf (relative
// to the rarest possible) times BM25's saturated, length-normalised
// frequency. The sum is evidence that
// does not grow with the length of the message, only with what it shares
// with the skill, so it is mapped into [0, 1] by a fixed saturation and a
// fixed threshold can reject messages no skill fits.
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
	memo := map[string]string{}
	for i, d := range docs {
		tf := map[string]float64{}
		for _, f := range []struct {
			text   string
			weight float64
		}{{d.Name, o.NameWeight}, {d.Description, o.DescriptionWeight}, {d.Body, o.BodyWeight}} {
			for _, t := range tokens(f.text, memo) {
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
	for _, t := range Tokens(message) {
		if seen[t] {
			continue
		}
		seen[t] = true
		plist := idx.postings[t]
		// idf relative to that of a term only one skill has, so evidence
		// means the same in a catalog of ten skills or ten thousand.
		w := idf(idx.n, len(plist)) / idf(idx.n, 1)
		for _, p := range plist {
			norm := o.K1 * (1 - o.B + o.B*idx.docLen[p.doc]/idx.avgLen)
			scores[p.doc] += w * p.tf / (p.tf + norm)
		}
	}
	for i := range scores {
		scores[i] /= scores[i] + o.Saturation
	}
	return scores, nil
}
