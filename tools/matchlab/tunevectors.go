package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/internal/matchtext"
)

// example is a message written as a user would write it, labelled
// with the skill it is for: an index into the skills given to Tune, or -1
// for a message that no skill should take.
type example struct {
	Message string
	Skill   int
}

// tuneOptions are the settings of tuneVectors. A field of zero or less
// takes the default given beside it (so a setting cannot be turned off by
// zero); the defaults are the settings candidates C and C2 of NOTEBOOK.md
// were tuned with. The built-in table is not tuned.
type tuneOptions struct {
	Epochs      int     // passes over the examples (4)
	Batch       int     // examples per step (64)
	Negatives   int     // skills drawn at random per step as wrong answers (400)
	Rate        float64 // Adam's step size (0.003)
	Decay       float64 // pull of the map towards the identity per step (0.05)
	Temperature float64 // scale of the similarities in the softmax (20)
	// OffTopic weighs the loss of a message no skill should take: the
	// log-sum-exp of its similarities to the step's skills, divided by
	// Temperature, is pushed below OffTopicMargin (a softplus). That value
	// lies between the largest similarity and the largest plus
	// ln(skills)/Temperature (about 0.3 at the defaults), so it weighs the
	// bulk of the similarities as well as the nearest. Defaults 0.3 and 0.45.
	OffTopic, OffTopicMargin float64
	Seed                     int64 // of the random order and draws (1)
}

func (o tuneOptions) withDefaults() tuneOptions {
	positiveOr(&o.Epochs, 4)
	positiveOr(&o.Batch, 64)
	positiveOr(&o.Negatives, 400)
	positiveOr(&o.Rate, 0.003)
	positiveOr(&o.Decay, 0.05)
	positiveOr(&o.Temperature, 20)
	positiveOr(&o.OffTopic, 0.3)
	positiveOr(&o.OffTopicMargin, 0.45)
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// positiveOr sets *p to v unless it is positive.
func positiveOr[T int | float64](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}

// bodyText is d's body as the matcher scores it: without its headings,
// which it scores with the outline.
func bodyText(d match.Doc) string {
	_, body := matchtext.SplitMarkdown(d.Body)
	return body
}

// Tune returns a table whose rows are w's rows passed through one learned
// linear map (100 × 100 for the built-in table) and made unit length
// again, so that a message's centroid lands near the skill it is for and
// away from other skills, as the semantic factor compares them: the mean
// of the message's cosines with a skill's name and description and with
// its body.
//
// The vectors of w know which words occur together in skills; they do not
// know how users ask for a skill, in the words of their situation rather
// than the skill's. The map learns that from labelled messages, with a
// softmax over the message's skill, the step's other skills and Negatives
// random ones, while messages labelled -1 are pushed away from all of
// them. Decay keeps the map near the identity, so words no example uses
// keep their place. The words, counts and format are w's; the result
// depends only on its inputs (a fixed seed, sums in a fixed order).
func tuneVectors(w *matchtext.WordVectors, skills []match.Doc, examples []example, o tuneOptions) (*matchtext.WordVectors, error) {
	o = o.withDefaults()
	if len(skills) == 0 {
		return nil, errors.New("tune word vectors: no skills")
	}
	t := newTuner(w, o)
	sk := make([]tuneSkill, len(skills))
	for i, d := range skills {
		sk[i] = tuneSkill{t.words(w.Rows(d.Name, d.Description)), t.words(w.Rows(bodyText(d)))}
	}
	var ex []tuneItem
	for i, e := range examples {
		if e.Skill < -1 || e.Skill >= len(skills) {
			return nil, fmt.Errorf("tune word vectors: example %d: skill %d of %d", i, e.Skill, len(skills))
		}
		if q := t.words(w.Rows(e.Message)); len(q.idx) > 0 {
			ex = append(ex, tuneItem{q, e.Skill})
		}
	}
	if len(ex) == 0 {
		return nil, errors.New("tune word vectors: no example has a word in the table")
	}
	rng := rand.New(rand.NewSource(o.Seed))
	for range o.Epochs {
		rng.Shuffle(len(ex), func(i, j int) { ex[i], ex[j] = ex[j], ex[i] })
		for b := 0; b < len(ex); b += o.Batch {
			batch := ex[b:min(b+o.Batch, len(ex))]
			t.update(t.gradient(sk, batch, t.draw(sk, batch, rng)), len(batch))
		}
	}
	return t.table()
}

// tuneText is a text's distinct words in the table, as centroid takes
// them, with their idf.
type tuneText struct {
	idx []int32
	idf []float64
}

type tuneSkill struct{ about, body tuneText }

type tuneItem struct {
	text  tuneText
	skill int
}

// tuner holds the map being learned and one step's state. Word state is
// kept in slices indexed by word and a list of the words touched, in the
// order first touched, so that every sum runs in the same order each time.
type tuner struct {
	w    *matchtext.WordVectors
	o    tuneOptions
	dim  int
	unit []float64 // w's rows as unit vectors
	m    []float64 // the map, dim × dim, row major
	// Adam's moment estimates of the map, and the step count.
	m1, m2 []float64
	steps  int
	// per step: for each touched word its mapped unit vector, the length
	// before normalising, and the gradient of the loss with respect to it
	slot    []int32 // word to position in touched, -1 if untouched
	touched []int32
	dir     [][]float64
	length  []float64
	grad    [][]float64
}

func newTuner(w *matchtext.WordVectors, o tuneOptions) *tuner {
	d, n := w.Dim(), w.Len()
	t := &tuner{w: w, o: o, dim: d, unit: make([]float64, n*d), m: make([]float64, d*d),
		m1: make([]float64, d*d), m2: make([]float64, d*d), slot: make([]int32, n)}
	for i := range n {
		word, _ := w.Word(i)
		for k, x := range w.Vector(word) {
			t.unit[i*d+k] = float64(x)
		}
		t.slot[i] = -1
	}
	for k := range d {
		t.m[k*d+k] = 1
	}
	return t
}

func (t *tuner) words(rows []int) tuneText {
	var c tuneText
	for _, i := range rows {
		_, df := t.w.Word(i)
		c.idx = append(c.idx, int32(i))
		c.idf = append(c.idf, math.Log(float64(t.w.Docs())/float64(df)))
	}
	return c
}

// mapped returns the position of word i among the touched words,
// computing its mapped unit vector on first touch.
func (t *tuner) mapped(i int32) int32 {
	if p := t.slot[i]; p >= 0 {
		return p
	}
	r := make([]float64, t.dim)
	t.mapRow(i, r)
	n := normalizeF(r)
	p := int32(len(t.touched))
	t.slot[i] = p
	t.touched = append(t.touched, i)
	t.dir = append(t.dir, r)
	t.length = append(t.length, n)
	t.grad = append(t.grad, make([]float64, t.dim))
	return p
}

// mapRow writes word i's row through the map, M u, into dst.
func (t *tuner) mapRow(i int32, dst []float64) {
	d := t.dim
	u := t.unit[int(i)*d : int(i+1)*d]
	for a := range d {
		dst[a] = dotF(t.m[a*d:(a+1)*d], u)
	}
}

// centroid returns the unit centroid of a text's mapped words and the
// length it had, or nil.
func (t *tuner) centroid(c tuneText) ([]float64, float64) {
	v := make([]float64, t.dim)
	for j, i := range c.idx {
		r := t.dir[t.mapped(i)]
		for k := range v {
			v[k] += c.idf[j] * r[k]
		}
	}
	n := normalizeF(v)
	if n == 0 {
		return nil, 0
	}
	return v, n
}

// backCentroid adds to the touched words' gradients what g, the gradient
// with respect to a unit centroid c of length n before normalising, gives.
func (t *tuner) backCentroid(c tuneText, v []float64, n float64, g []float64) {
	gv := dotF(g, v)
	for j, i := range c.idx {
		dst := t.grad[t.slot[i]]
		for k := range dst {
			dst[k] += c.idf[j] * (g[k] - gv*v[k]) / n
		}
	}
}

// skillSide is a skill's vector as skillVector makes it, with what its
// gradient needs.
type skillSide struct {
	about, body   []float64
	aboutN, bodyN float64
	v             []float64
	halves        float64
}

func (t *tuner) skill(s tuneSkill) skillSide {
	var ss skillSide
	ss.about, ss.aboutN = t.centroid(s.about)
	ss.body, ss.bodyN = t.centroid(s.body)
	ss.v = make([]float64, t.dim)
	for _, c := range [][]float64{ss.about, ss.body} {
		if c != nil {
			ss.halves++
			for k := range c {
				ss.v[k] += c[k]
			}
		}
	}
	for k := range ss.v {
		ss.v[k] /= max(ss.halves, 1)
	}
	return ss
}

// draw returns the skills a batch is scored against: the batch's own, in
// order, then random ones up to Negatives more.
func (t *tuner) draw(sk []tuneSkill, batch []tuneItem, rng *rand.Rand) []int {
	seen := map[int]bool{}
	var cand []int
	add := func(j int) {
		if !seen[j] {
			seen[j] = true
			cand = append(cand, j)
		}
	}
	for _, e := range batch {
		if e.skill >= 0 {
			add(e.skill)
		}
	}
	for want := min(len(sk), len(cand)+t.o.Negatives); len(cand) < want; {
		add(rng.Intn(len(sk)))
	}
	return cand
}

// gradient returns the gradient of the batch's summed loss against the
// skills cand with respect to the map, row major.
func (t *tuner) gradient(sk []tuneSkill, batch []tuneItem, cand []int) []float64 {
	for _, i := range t.touched {
		t.slot[i] = -1
	}
	t.touched, t.dir, t.length, t.grad = t.touched[:0], t.dir[:0], t.length[:0], t.grad[:0]
	sides := make([]skillSide, len(cand))
	gSide := make([][]float64, len(cand))
	for x, j := range cand {
		sides[x] = t.skill(sk[j])
		gSide[x] = make([]float64, t.dim)
	}
	tau := t.o.Temperature
	sim, p := make([]float64, len(cand)), make([]float64, len(cand))
	for _, e := range batch {
		q, qn := t.centroid(e.text)
		if q == nil {
			continue
		}
		top := math.Inf(-1)
		for x := range cand {
			sim[x] = dotF(q, sides[x].v)
			top = max(top, tau*sim[x])
		}
		var z float64
		for x := range cand {
			p[x] = math.Exp(tau*sim[x] - top)
			z += p[x]
		}
		// scale: the gradient of the loss with respect to each
		// similarity is scale·p/z, less tau at the right skill.
		scale := tau
		if e.skill < 0 {
			soft := (top + math.Log(z)) / tau // a soft maximum of the similarities
			scale = t.o.OffTopic * tau / (1 + math.Exp(-tau*(soft-t.o.OffTopicMargin)))
		}
		gq := make([]float64, t.dim)
		for x := range cand {
			g := scale * p[x] / z
			if e.skill >= 0 && cand[x] == e.skill {
				g -= tau
			}
			for k := range gq {
				gq[k] += g * sides[x].v[k]
				gSide[x][k] += g * q[k]
			}
		}
		t.backCentroid(e.text, q, qn, gq)
	}
	for x, j := range cand {
		s := sides[x]
		for k := range gSide[x] {
			gSide[x][k] /= max(s.halves, 1)
		}
		if s.about != nil {
			t.backCentroid(sk[j].about, s.about, s.aboutN, gSide[x])
		}
		if s.body != nil {
			t.backCentroid(sk[j].body, s.body, s.bodyN, gSide[x])
		}
	}
	// Through the normalising of each mapped row r = M u to the map.
	d := t.dim
	gm := make([]float64, d*d)
	for p, i := range t.touched {
		if t.length[p] == 0 {
			continue
		}
		g, r := t.grad[p], t.dir[p]
		gr := dotF(g, r)
		u := t.unit[int(i)*d : int(i+1)*d]
		for a := range d {
			da := (g[a] - gr*r[a]) / t.length[p]
			row := gm[a*d : (a+1)*d]
			for b, x := range u {
				row[b] += da * x
			}
		}
	}
	return gm
}

// update takes one Adam step with gm, the summed gradient of n examples,
// and the decay towards the identity.
func (t *tuner) update(gm []float64, n int) {
	d := t.dim
	t.steps++
	const b1, b2 = 0.9, 0.999
	c1, c2 := 1-math.Pow(b1, float64(t.steps)), 1-math.Pow(b2, float64(t.steps))
	for k := range t.m {
		id := 0.0
		if k/d == k%d {
			id = 1
		}
		g := gm[k]/float64(n) + t.o.Decay*(t.m[k]-id)
		t.m1[k] = b1*t.m1[k] + (1-b1)*g
		t.m2[k] = b2*t.m2[k] + (1-b2)*g*g
		t.m[k] -= t.o.Rate * (t.m1[k] / c1) / (math.Sqrt(t.m2[k]/c2) + 1e-8)
	}
}

// table writes every row of w through the map into a new table. It shares
// w's words, index and counts, which no table changes once made.
func (t *tuner) table() (*matchtext.WordVectors, error) {
	w, d := t.w, t.dim
	words, dfs, rows := make([]string, w.Len()), make([]int, w.Len()), make([][]float32, w.Len())
	r := make([]float64, d)
	for i := range words {
		words[i], dfs[i] = w.Word(i)
		t.mapRow(int32(i), r)
		rows[i] = make([]float32, d)
		for a, x := range r {
			rows[i][a] = float32(x)
		}
	}
	return matchtext.NewWordVectors(w.Docs(), words, dfs, rows)
}

// normalizeF scales v to unit length, unless it is zero, and returns the
// length it had.
func normalizeF(v []float64) float64 {
	n := math.Sqrt(dotF(v, v))
	if n > 0 {
		for k := range v {
			v[k] /= n
		}
	}
	return n
}

func dotF(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += a[k] * b[k]
	}
	return s
}
