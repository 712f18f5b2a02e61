package match

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
	"sync"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// Fields of a skill the lexical matcher scores separately (BM25F).
const (
	fieldName = iota
	fieldDescription
	// fieldOutline is the body's headings and the skill's tool names and
	// descriptions: what the instructions are about, without their text.
	fieldOutline
	fieldBody
	numFields
)

// textFields are the texts Index reads a skill as, in order, by the field
// each counts in: the requests lent to it (LexicalOptions.Examples, at
// textLent) are part of its outline, read after its own, since they say
// what the skill is for as its headings do.
var textFields = [...]int{fieldName, fieldDescription, fieldOutline, fieldOutline, fieldBody}

const textLent = 3

// FieldOptions weigh and length-normalise one field.
type FieldOptions struct {
	// Weight scales the field's term frequencies.
	Weight float64
	// B is BM25's length normalisation in [0, 1]: 0 ignores length, 1
	// divides frequencies by length over RefLen.
	B float64
	// RefLen is the reference length in tokens. It is fixed, not the
	// catalog's average, so a skill's score does not depend on which other
	// skills are installed.
	RefLen float64
}

// LexicalOptions tune the lexical matcher. Zero values take the defaults,
// which were chosen on the labelled sets of the realistic skills in
// testdata/match-long (the field weights on the tune half, the coverage
// factor on six sets, the semantic factor and the threshold on seven, the
// code factor on twenty-one, the everyday factor on thirty-three, the
// breadth factor on thirty-seven), the factors' strengths then fitted
// together on 49 (go run ./tools/matchlab fit repeats the fit);
// docs/matching.md has how, tools/matchlab/NOTEBOOK.md each decision. A
// negative value means zero (Semantic, Code, Everyday, Breadth: off).
type LexicalOptions struct {
	// K1 is BM25's term-frequency saturation.
	K1 float64
	// Name, Description, Outline (headings and tool names) and Body weigh
	// and normalise each field.
	Name, Description, Outline, Body FieldOptions
	// Saturation turns evidence e into a score e/(e+Saturation): the
	// evidence at which a skill scores 0.5.
	Saturation float64
	// Unanchored scales the evidence of a skill that has none of the
	// message's terms in its name or description: a long body shares a
	// word or two with almost any message, and that is little reason to
	// load the skill. Zero means the default, 0.82 (close to
	// exp(−Anchor): a skill with no anchor counts about as one anchor
	// less than a skill with one).
	Unanchored float64
	// Anchor is the strength of the anchor factor: a skill that has n ≥ 1
	// of the message's distinct terms in its name or description has its
	// evidence multiplied by exp(Anchor·(n − 1)). A message that names two
	// or three things a skill says it is for is likelier to be for it than
	// one that shares a single word, however rare. The terms are those the
	// index matches: words, word pairs ("merge pdf files" against "Merge
	// PDF files" is 5: three words and two pairs), and the parts of a
	// compound or levelled word (SEV2 gives sev2 and sev) that the name or
	// description has as words. The strength was fitted with this count.
	// Zero means the default, 0.19; a negative value turns the factor off.
	Anchor float64
	// BodyIDF is the power of a term's relative idf that further scales
	// its body frequency: a long body has most common words somewhere, so
	// only its rare words say much about it.
	BodyIDF float64
	// NameBonus is evidence added, times the term's relative idf, for each
	// message term in a skill's name, outside BM25's saturation: a skill
	// named for what the user asks about is worth more than one that
	// mentions it.
	NameBonus float64
	// Unknown is the exponent of the share of the message's words that no
	// skill in the catalog uses (1 minus it scales every skill's
	// evidence). Messages on a catalog's topics are written mostly in its
	// words; a message about hiking trails that shares "near" with one
	// skill is mostly words no skill knows. A catalog with a small
	// vocabulary cannot tell the two apart, so the exponent shrinks in
	// proportion below Vocabulary distinct words. The defaults are 0.36
	// and 600.
	Unknown, Vocabulary float64
	// Coverage is the power of the share of the message's words that a
	// skill has (in any field), which scales its evidence: a skill that
	// shares one word of a message, such as "latex" with "latex or nitrile
	// gloves for cleaning the bathroom", is less likely the one meant than
	// a skill that shares most of them. The absence of a word says more the
	// more words a skill has, so the power is scaled by the skill's length
	// over CoverageLen tokens, up to 1: a 100-word skill that lacks the
	// message's other words is hardly evidence against it. The defaults
	// are 2 and 1,000.
	Coverage, CoverageLen float64
	// Semantic is the strength of the semantic factor, which multiplies a
	// skill's evidence by exp(Semantic·(s − SemanticCentre)), where s is
	// the weighted mean (see BodyShare) of the cosines between the
	// message's word vector (the idf-weighted centroid of its words'
	// vectors) and those of the skill's name and description and of its
	// body, or the cosine with the one of the two that has a word in the
	// table. Word matching cannot tell "latex" in a question about gloves
	// from "latex" in one about papers; the other words of the message
	// can, when they point away from the skill's. A message or skill with
	// no word in the table is left as it is. The defaults are 4.1 and 0.6.
	Semantic, SemanticCentre float64
	// BodyShare is the weight of the body's cosine in s, in [0, 1]; the
	// name and description's has 1 − BodyShare. Zero means the default,
	// 0.85 (one half before the strengths were fitted). A description
	// names what a skill is for in its author's terms; its body shows the
	// situations it handles (the errors, the code, the steps), which is
	// nearer how users describe what they need. A negative value means 0:
	// the name and description alone (or the body, when they have no word
	// in the table).
	BodyShare float64
	// Vectors are the word vectors of the semantic factor; nil means the
	// table built into the binary (matchtext.DefaultWordVectors), read on the first
	// Index.
	Vectors *matchtext.WordVectors
	// Examples is how many published skills lend each skill the requests
	// their users wrote (see matchtext.Examples): those whose name and
	// description are nearest the skill's by word vector, at a cosine of
	// 0.5 or more, nearest first. The requests are added to the skill's
	// outline, so a skill written in its author's words also has its
	// users'. Zero means the default, 5; a negative value turns it off.
	Examples int
	// ExampleSet are the requests lent; nil means those built into the
	// binary (matchtext.DefaultExamples), read on the first Index. Their vectors must
	// come from the same word-vector table as Vectors. The built-in ones
	// come from the built-in table, so when Vectors is given and
	// ExampleSet is not, no request is lent.
	ExampleSet *matchtext.Examples
	// Code multiplies every skill's evidence for a message that pastes
	// code, markup or a formula (see hasCode): a pasted pattern, error
	// line or formula says the message asks about a technical artifact,
	// yet its words are few and often unknown, so its skill scores low.
	// Off-topic messages seldom carry one. The default is 3.4; 1, or a
	// negative value, turns the factor off, and a value between 0 and 1
	// would count such messages against every skill. Every skill's
	// evidence is scaled alike, so the lexical ranking does not change;
	// only what clears the threshold does (under the hybrid strategy,
	// which adds an embedding score, the order can change).
	Code float64
	// Everyday is the strength of the everyday-question factor: a message
	// that the classifier gives a probability p of being an everyday
	// question ("my dentist billed me for a filling I never had") has
	// every skill's evidence multiplied by
	// exp(−Everyday·max(0, p − EverydayCentre)). Such a message often
	// shares a word with a skill in another sense (bill, incident, chart),
	// and its other words are ones no skill is about. Every skill is
	// scaled alike, so the lexical ranking does not change; only what
	// clears the threshold does (under the hybrid strategy, which adds an
	// embedding score, the order can change). The default is 1.8 with
	// centre 0 (zero means it; a negative centre is 0 too): the factor is
	// exp(−1.8·p), so a message the classifier is sure of is scaled by
	// about 0.17 and one it gives 0.1 by 0.84. The classifier's p is a
	// score more than a calibrated probability: it depends on the order
	// its training messages came in (tools/matchlab/NOTEBOOK.md). A
	// negative value turns the factor off.
	Everyday, EverydayCentre float64
	// EverydayModel is the classifier; nil means the one built into the
	// binary (matchtext.DefaultEveryday), read on the first Index.
	EverydayModel *matchtext.Everyday
	// Breadth is the strength of the breadth factor. A skill's breadth is
	// the share of the background messages (written for other published
	// skills) that would match it in this catalog, at a fixed threshold
	// of 0.2125 with every other factor on. A broad skill, whose words are
	// everyone's (writing skills, calling an LLM's API, CI pipelines),
	// takes messages meant for something else; its evidence is multiplied
	// by min(1, BreadthCentre/breadth)^Breadth. The factor does not depend
	// on the message, so a broad skill ranks lower as well as scoring
	// lower. It does depend on the other skills, through each term's idf:
	// in a catalog of one or two skills every shared word counts as rare,
	// and most skills look broad. The default is 1.1 with centre 0.05: a
	// skill that matches one background message in twenty or fewer keeps
	// its evidence, and one that matches 15 % of them has it scaled by
	// 0.30. Measuring it costs a pass over the background each time a
	// catalog is indexed (see BreadthCache). A negative value turns the
	// factor off.
	Breadth, BreadthCentre float64
	// Background are the messages breadth is measured on; nil means the
	// ones built into the binary (matchtext.DefaultBackground).
	Background []string
	// BreadthCache, if set, keeps the measured breadths between
	// processes, keyed by the build (its module version, clean VCS
	// revision, or else the executable's path, size and modification
	// time), the options and every indexed field of every skill. Nothing
	// is cached when Vectors, EverydayModel, Background or ExampleSet are
	// given, or when the build cannot be named.
	BreadthCache BreadthCache
}

// DefaultLexicalThreshold is the lexical matcher's default minimum score.
// It was chosen with the semantic factor on seven labelled sets of the
// realistic skills and decided on two more (0.2125), lowered with the
// breadth factor (0.2) and the lent requests (0.1875), and chosen again
// with the factors' fitted strengths on 49 sets and decided on four more
// (go run ./tools/matchlab fit repeats the fit; tools/matchlab/NOTEBOOK.md
// has each step).
const DefaultLexicalThreshold = 0.18125

// The factors' default strengths were fitted together, on the 49 scored
// labelled sets of the realistic skills, by a logistic model over the
// logs of the factors (tools/matchlab fit), and decided on four more sets
// (tools/matchlab/NOTEBOOK.md, "The factors' strengths fitted together"). Each
// factor had been chosen alone before.
const (
	defaultUnanchored     = 0.82
	defaultAnchor         = 0.19
	defaultUnknown        = 0.36
	defaultCoverage       = 2.0
	defaultSemantic       = 4.1
	defaultBodyShare      = 0.85
	defaultCode           = 3.4
	defaultEveryday       = 1.8
	defaultEverydayCentre = 0.0
	defaultBreadth        = 1.1
)

// defaultExamples is LexicalOptions.Examples's default, chosen on the 41
// scored labelled sets and decided on four more (docs/matching.md).
const defaultExamples = 5

func (o LexicalOptions) withDefaults() LexicalOptions {
	def := func(v *float64, d float64) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	field := func(f *FieldOptions, w, b, ref float64) {
		def(&f.Weight, w)
		def(&f.B, b)
		def(&f.RefLen, ref)
	}
	def(&o.K1, 1.2)
	field(&o.Name, 3, 0.5, 3)
	field(&o.Description, 1.5, 0.5, 40)
	field(&o.Outline, 0.5, 0.5, 60)
	field(&o.Body, 0.5, 0.5, 1000)
	def(&o.Saturation, 1.25)
	def(&o.Unanchored, defaultUnanchored)
	def(&o.Anchor, defaultAnchor)
	def(&o.BodyIDF, 1)
	def(&o.NameBonus, 0.5)
	def(&o.Unknown, defaultUnknown)
	def(&o.Vocabulary, 600)
	def(&o.Coverage, defaultCoverage)
	def(&o.CoverageLen, 1000)
	def(&o.Semantic, defaultSemantic)
	def(&o.SemanticCentre, 0.6)
	def(&o.BodyShare, defaultBodyShare)
	o.BodyShare = min(o.BodyShare, 1)
	def(&o.Code, defaultCode)
	def(&o.Everyday, defaultEveryday)
	def(&o.EverydayCentre, defaultEverydayCentre)
	def(&o.Breadth, defaultBreadth)
	def(&o.BreadthCentre, 0.05)
	switch {
	case o.Examples == 0:
		o.Examples = defaultExamples
	case o.Examples < 0:
		o.Examples = 0
	}
	return o
}

func (o LexicalOptions) field(f int) FieldOptions {
	return [...]FieldOptions{o.Name, o.Description, o.Outline, o.Body}[f]
}

// Lexical ranks skills by BM25F over their name, description, outline
// (headings and tools) and body. Each field's term frequency is weighted
// and normalised against a fixed reference length, the fields are summed,
// and the sum is saturated once per term, so a word repeated all over a
// long body counts little more than once. Each message term a skill
// contains adds that times the term's idf relative to the rarest possible,
// plus a bonus for a term in the name. Skills with no message term in
// their name or description, and messages mostly of words no skill uses,
// are discounted. The sum is evidence that does not grow with the length
// of the message, only with what it shares with the skill, so it maps into
// [0, 1] by a fixed saturation, and one threshold can reject messages no
// skill fits. docs/matching.md has the parameters and how they were chosen.
type Lexical struct {
	opts LexicalOptions
	mu   sync.RWMutex
	idx  *lexIndex
}

// posting is one skill's weighted, length-normalised frequency of a term:
// in the body, and in the other fields summed, kept apart because the
// body's weight depends on the term's idf.
type posting struct {
	doc   int32
	other float32
	body  float32
	// inName and inDescription anchor the skill (see Unanchored); a
	// lesser part of a compound word does not.
	inName, inDescription bool
	// where says, for explanations, where else the term is (the where*
	// bits): a byte, so a posting stays 16 bytes.
	where uint8
}

// Bits of posting.where.
const (
	whereOutline uint8 = 1 << iota // the skill's own outline, as a word or a part
	whereLent                      // the requests lent to it (LexicalOptions.Examples)
	wherePart                      // its name or description, only as a lesser part of a compound word
)

type lexIndex struct {
	n int
	// lengths are the skills' weighted token counts over all fields.
	lengths  []float64
	words    int // distinct words, pairs not counted
	postings map[string][]posting
	// vec is the word-vector table of the semantic factor, nil when the
	// factor is off; vectors are the skills' word vectors, dim apiece,
	// and hasVector whether a skill has one.
	vec       *matchtext.WordVectors
	vectors   []float32
	hasVector []bool
	// everyday is the classifier of the everyday-question factor, nil
	// when the factor is off.
	everyday *matchtext.Everyday
	// breadth is each skill's breadth and narrow the factor it gives,
	// both nil when the breadth factor is off.
	breadth, narrow []float64
}

// NewLexical returns a lexical matcher.
func NewLexical(opts LexicalOptions) *Lexical { return &Lexical{opts: opts.withDefaults()} }

// fields splits a document into the scored fields.
func fields(d Doc) [numFields]string {
	headings, body := matchtext.SplitMarkdown(d.Body)
	outline := headings
	for _, t := range d.Tools {
		outline += t + "\n"
	}
	return [numFields]string{d.Name, d.Description, outline, body}
}

// Index implements Matcher.
func (l *Lexical) Index(ctx context.Context, docs []Doc) error {
	ix, err := newIndexer(l.opts, len(docs))
	if err != nil {
		return err
	}
	for i, d := range docs {
		ix.add(i, d)
	}
	idx, o := ix.idx, l.opts
	if o.Breadth > 0 {
		if idx.breadth, err = idx.breadths(ctx, o, ix.digest.sum()); err != nil {
			return fmt.Errorf("measure breadth: %w", err)
		}
		idx.narrow = make([]float64, idx.n)
		for i, b := range idx.breadth {
			idx.narrow[i] = breadthFactor(b, o.Breadth, o.BreadthCentre)
		}
	}
	l.mu.Lock()
	l.idx = idx
	l.mu.Unlock()
	return nil
}

// indexer builds a lexIndex one skill at a time, reusing its scratch
// space across skills.
type indexer struct {
	o       LexicalOptions
	idx     *lexIndex
	weights [numFields]float64
	m       *matchtext.Memo
	slot    map[string]int       // term to its row in tf, per skill
	tf      [][numFields]float64 // weighted frequency of each term by field
	// Where each term occurs, as its posting will say: in the name and
	// description as a word or a pair, not only as a lesser part of a
	// compound word, so "TypeScript" in a description does not anchor a
	// message about a "script"; and the where bits.
	marks       []posting
	terms       []string
	about, body []matchtext.Term // a skill's name and description, and its body, for its word vector
	// The requests lent to a skill are those of the published skills
	// nearest its name and description; the built-in ones have the
	// built-in table's vectors (see LexicalOptions.ExampleSet).
	vec            *matchtext.WordVectors
	aboutVec, half []float32 // the centroid of the name and description, and scratch
	examples       *matchtext.Examples
	lentScans      map[int]matchtext.Scanned // by group
	// The fields are hashed as they are split out, for the breadth
	// cache's key.
	digest *fieldDigest
}

func newIndexer(o LexicalOptions, n int) (*indexer, error) {
	ix := &indexer{o: o, idx: &lexIndex{n: n, postings: map[string][]posting{}}, m: matchtext.NewMemo(),
		slot: map[string]int{}, lentScans: map[int]matchtext.Scanned{}}
	for f := range ix.weights {
		ix.weights[f] = o.field(f).Weight
	}
	lending := o.Examples > 0 && (o.Vectors == nil || o.ExampleSet != nil)
	var err error
	if o.Semantic > 0 || lending {
		if ix.vec, err = orBuiltIn(o.Vectors, matchtext.DefaultWordVectors); err != nil {
			return nil, err
		}
		ix.aboutVec, ix.half = make([]float32, ix.vec.Dim()), make([]float32, ix.vec.Dim())
	}
	if o.Semantic > 0 {
		ix.idx.vec = ix.vec
		ix.idx.vectors = make([]float32, n*ix.vec.Dim())
		ix.idx.hasVector = make([]bool, n)
	}
	if lending {
		if ix.examples, err = orBuiltIn(o.ExampleSet, matchtext.DefaultExamples); err != nil {
			return nil, err
		}
	}
	if o.Everyday > 0 {
		if ix.idx.everyday, err = orBuiltIn(o.EverydayModel, matchtext.DefaultEveryday); err != nil {
			return nil, err
		}
	}
	if o.Breadth > 0 && o.BreadthCache != nil {
		ix.digest = newFieldDigest()
	}
	return ix, nil
}

// add indexes skill i.
func (ix *indexer) add(i int, d Doc) {
	clear(ix.slot)
	ix.tf, ix.terms, ix.marks = ix.tf[:0], ix.terms[:0], ix.marks[:0]
	ix.about, ix.body = ix.about[:0], ix.body[:0]
	var length [numFields]float64 // each field's weighted token count
	var hasAbout bool             // aboutVec holds this skill's centroid
	fs := fields(d)
	// The lent requests follow from the name and description (and the
	// options and the build), so the digest need not hash them.
	ix.digest.add(fs[:]...)
	for x, f := range textFields {
		lent := x == textLent
		if lent && ix.vec != nil {
			hasAbout = ix.vec.Centroid(ix.about, ix.aboutVec) // the name and description are read
		}
		analyzed := ix.fieldTerms(fs[f], f, lent, hasAbout)
		switch {
		case f == fieldName || f == fieldDescription:
			if ix.vec != nil {
				ix.about = append(ix.about, analyzed...)
			}
		case f == fieldBody && ix.idx.vectors != nil:
			ix.body = analyzed
		}
		ix.count(analyzed, f, lent, &length)
	}
	ix.post(i, length, hasAbout)
}

// fieldTerms analyses the text of field f, or for the lent requests
// (lent) those of the example groups nearest the skill. Word pairs are not
// indexed in the body: they would double the index for little gain where
// the body counts little.
func (ix *indexer) fieldTerms(text string, f int, lent, hasAbout bool) []matchtext.Term {
	switch {
	case !lent:
		return matchtext.Analyze(text, ix.m, f != fieldBody)
	case ix.examples != nil && hasAbout:
		// Many skills borrow the same groups: each is analysed once, and
		// the pairs across groups joined as if the requests were one text.
		groups := ix.examples.Nearest(ix.aboutVec, ix.o.Examples)
		parts := make([]matchtext.Scanned, len(groups))
		for j, g := range groups {
			sc, ok := ix.lentScans[g]
			if !ok {
				sc = matchtext.Scan(strings.Join(ix.examples.Group(g), "\n"), ix.m, true)
				ix.lentScans[g] = sc
			}
			parts[j] = sc
		}
		return matchtext.JoinScans(parts, true)
	}
	return nil
}

// count adds the terms of field f to the skill's frequencies and marks.
func (ix *indexer) count(analyzed []matchtext.Term, f int, lent bool, length *[numFields]float64) {
	for _, t := range analyzed {
		k, ok := ix.slot[t.Text]
		if !ok {
			k = len(ix.tf)
			ix.slot[t.Text] = k
			ix.tf = append(ix.tf, [numFields]float64{})
			ix.marks = append(ix.marks, posting{})
			ix.terms = append(ix.terms, t.Text)
		}
		ix.tf[k][f] += t.Weight
		mark := &ix.marks[k]
		whole := t.Whole == "" || t.Weight == 1
		switch {
		case lent:
			mark.where |= whereLent
		case f == fieldOutline:
			mark.where |= whereOutline
		case f == fieldName && whole:
			mark.inName = true
		case f == fieldDescription && whole:
			mark.inDescription = true
		case f == fieldName || f == fieldDescription:
			mark.where |= wherePart
		}
		length[f] += t.Weight
	}
}

// post writes skill i's postings: each term's frequencies, normalised by
// BM25's length divisor of each field, and its word vector.
func (ix *indexer) post(i int, length [numFields]float64, hasAbout bool) {
	o, idx := ix.o, ix.idx
	var norm [numFields]float64
	var docLen float64
	for f, n := range length {
		fo := o.field(f)
		norm[f] = 1 - fo.B + fo.B*n/fo.RefLen
		docLen += n
	}
	idx.lengths = append(idx.lengths, docLen)
	if idx.vectors != nil {
		dim := ix.vec.Dim()
		idx.hasVector[i] = skillVector(ix.vec, ix.aboutVec, hasAbout, ix.body, o.BodyShare, idx.vectors[i*dim:(i+1)*dim], ix.half)
	}
	for k, t := range ix.terms {
		v := &ix.tf[k]
		plist := idx.postings[t]
		if len(plist) == 0 && !strings.Contains(t, " ") {
			idx.words++
		}
		p := ix.marks[k]
		p.doc = int32(i)
		p.body = float32(ix.weights[fieldBody] * v[fieldBody] / norm[fieldBody])
		var other float64
		for f := range fieldBody {
			other += ix.weights[f] * v[f] / norm[f]
		}
		p.other = float32(other)
		idx.postings[t] = append(plist, p)
	}
}

// orBuiltIn is given, or when it is nil the table built into the binary.
func orBuiltIn[T any](given *T, builtIn func() (*T, error)) (*T, error) {
	if given != nil {
		return given, nil
	}
	return builtIn()
}

// idf is BM25's inverse document frequency, always positive.
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Score implements Matcher.
func (l *Lexical) Score(_ context.Context, message string) ([]float64, error) {
	scores, _ := l.score(message, false)
	return scores, nil
}

// TermEvidence is what one term of a message adds to a skill's evidence,
// before the skill-wide factors.
type TermEvidence struct {
	// Term is the stemmed term; a word pair is two terms and a space.
	Term     string
	Evidence float64
	// Fields are where the skill has the term: name, description,
	// outline, examples (the requests lent to it, see
	// LexicalOptions.Examples) and body. Outline (headings and tools) is
	// named only when the term is in neither the name nor the
	// description, which it then may be as a lesser part of a compound
	// word: the index keeps those three fields as one frequency.
	Fields []string
}

// Explanation is how the lexical matcher reached one skill's score.
type Explanation struct {
	Score float64
	// Terms are the message terms the skill has, most evidence first.
	Terms []TermEvidence
	// Anchored is whether a message term is in the skill's name or
	// description; if not, the evidence was scaled by Unanchored.
	Anchored bool
	// Known is the factor for the message's words that no skill uses
	// (1 when the catalog knows them all).
	Known float64
	// Code is the factor for code in the message (see
	// LexicalOptions.Code); 1 when it has none or the factor is off.
	Code float64
	// EverydayOn is whether the everyday factor is on; if so,
	// EverydayProbability is the classifier's probability that the message
	// is an everyday question, and Everyday the factor it gave (see
	// LexicalOptions.Everyday). When off they are 0 and 1.
	EverydayOn                    bool
	EverydayProbability, Everyday float64
	// BreadthOn is whether the breadth factor is on; if so, Breadth is
	// the share of the background messages that match the skill in this
	// catalog, and Narrow the factor that gave (see LexicalOptions.Breadth). When
	// off they are 0 and 1.
	BreadthOn       bool
	Breadth, Narrow float64
	// Coverage is the factor for the share of the message's Words that
	// the skill has (Covered); 1 when the factor is off.
	Coverage       float64
	Covered, Words int
	// Anchors is how many of the message's distinct terms the skill has
	// in its name or description, and Anchor the factor they gave (1 when
	// there are none or one, or the factor is off; see
	// LexicalOptions.Anchor).
	Anchors int
	Anchor  float64
	// Similarity is the cosine between the message's and the skill's
	// word vectors, and Semantic the factor it gave (1 when the factor is
	// off or either has no word in the table).
	Similarity, Semantic float64
	// Evidence is the sum of the terms' evidence after the factors; the
	// score is Evidence/(Evidence+Saturation).
	Evidence float64
}

// Explain returns, for every indexed document in index order, how its
// score for message came about. Its scores are Score's.
func (l *Lexical) Explain(_ context.Context, message string) ([]Explanation, error) {
	_, ex := l.score(message, true)
	return ex, nil
}

// score scores every indexed document, and records the evidence of each
// term when explain is set (Score does not pay for it).
func (l *Lexical) score(message string, explain bool) ([]float64, []Explanation) {
	l.mu.RLock()
	idx := l.idx
	l.mu.RUnlock()
	if idx == nil || idx.n == 0 {
		return nil, nil
	}
	return idx.score(l.opts, message, nil, explain)
}

// score is Lexical.score on this index, with stems cached in m (which may
// be nil): the terms' evidence for each skill (termEvidence), what the
// message says once for all skills (messageFacts), then each skill's
// factors (applyFactors), which Explain reads instead of scoring again.
func (idx *lexIndex) score(o LexicalOptions, message string, m *matchtext.Memo, explain bool) ([]float64, []Explanation) {
	ev := idx.termEvidence(o, message, m, explain)
	mf := idx.messageFacts(o, message, m, ev)
	if !explain {
		// Each skill's evidence is read before its score is written
		// over it.
		idx.applyFactors(o, &ev, &mf, ev.sum, nil)
		return ev.sum, nil
	}
	scores := make([]float64, idx.n)
	fs := make([]factors, idx.n)
	idx.applyFactors(o, &ev, &mf, scores, fs)
	ex := make([]Explanation, idx.n)
	for i := range ex {
		ex[i] = idx.explanation(o, i, fs[i], &ev, &mf)
	}
	return scores, ex
}

// evidence is what the message's terms give each skill before the
// skill-wide factors.
type evidence struct {
	terms    []matchtext.Term
	sum      []float64 // each skill's evidence
	anchors  []int32   // the message terms in each skill's name or description
	has      []uint64  // which message words each skill has, blocks bits a skill (coverage on)
	blocks   int
	known    map[string]bool  // whether some skill has each whole word of the message
	byTerm   [][]TermEvidence // each skill's terms, when explaining
	wordsLen int              // the message's distinct words
}

// termEvidence sums, for every skill, the evidence of the message's
// distinct terms it has, and notes what the factors need: anchors, the
// words each skill covers, and which words some skill knows.
func (idx *lexIndex) termEvidence(o LexicalOptions, message string, m *matchtext.Memo, explain bool) evidence {
	ev := evidence{
		terms:   matchtext.Analyze(message, m, true),
		sum:     make([]float64, idx.n),
		anchors: make([]int32, idx.n),
		// Whether each whole word of the message is one some skill has,
		// by itself or by a part that stands for it (SEV2: sev).
		known: map[string]bool{},
	}
	if explain {
		ev.byTerm = make([][]TermEvidence, idx.n)
	}
	// Which of the message's words each skill has, as bits by word, for
	// the coverage factor.
	wordIndex := map[string]int{}
	for _, t := range ev.terms {
		if w := wordOf(t); !strings.Contains(w, " ") {
			if _, ok := wordIndex[w]; !ok {
				wordIndex[w] = len(wordIndex)
			}
		}
	}
	ev.wordsLen = len(wordIndex)
	ev.blocks = (len(wordIndex) + 63) / 64
	if o.Coverage > 0 {
		ev.has = make([]uint64, idx.n*ev.blocks)
	}
	seen := map[string]bool{}
	maxIDF := idf(idx.n, 1)
	for _, t := range ev.terms {
		if seen[t.Text] {
			continue
		}
		seen[t.Text] = true
		plist := idx.postings[t.Text]
		if t.Weight == 1 { // pairs and lesser parts would count a word twice
			w := wordOf(t)
			ev.known[w] = ev.known[w] || len(plist) > 0
		}
		// A word, or a part of one, that a skill has covers the word.
		bit, inBitset := wordIndex[wordOf(t)]
		if len(plist) == 0 {
			continue
		}
		// idf relative to that of a term only one skill has, so evidence
		// means the same in a catalog of ten skills or ten thousand.
		rel := idf(idx.n, len(plist)) / maxIDF
		w := t.Weight * rel
		bodyScale := math.Pow(rel, o.BodyIDF)
		for _, p := range plist {
			tf := float64(p.other) + bodyScale*float64(p.body)
			e := w * tf / (tf + o.K1)
			if p.inName {
				e += o.NameBonus * w
			}
			ev.sum[p.doc] += e
			if ev.has != nil && inBitset {
				ev.has[int(p.doc)*ev.blocks+bit/64] |= 1 << (bit % 64)
			}
			if p.inName || p.inDescription {
				ev.anchors[p.doc]++
			}
			if explain {
				ev.byTerm[p.doc] = append(ev.byTerm[p.doc], TermEvidence{Term: t.Text, Evidence: e, Fields: p.fields()})
			}
		}
	}
	return ev
}

// facts are what scoring learns of the message once, for every skill.
type facts struct {
	meaning             []float32 // the message's word vector, or nil
	known, code         float64   // the unknown-words and code factors
	everyday, pEveryday float64   // the everyday factor and its probability
	words               float64   // whole words of the message
	logShare            []float64 // log(k/words) for k covered words
}

func (idx *lexIndex) messageFacts(o LexicalOptions, message string, m *matchtext.Memo, ev evidence) facts {
	f := facts{known: 1, code: 1, everyday: 1}
	if idx.vec != nil {
		f.meaning = make([]float32, idx.vec.Dim())
		if !idx.vec.Centroid(ev.terms, f.meaning) {
			f.meaning = nil
		}
	}
	// Every skill's evidence shrinks alike with the share of unknown words.
	var unknown float64
	for _, k := range ev.known {
		f.words++
		if !k {
			unknown++
		}
	}
	if f.words > 0 {
		f.known = math.Pow(1-unknown/f.words, o.Unknown*min(1, float64(idx.words)/o.Vocabulary))
	}
	if o.Code > 0 && hasCode(message) {
		f.code = o.Code
	}
	if idx.everyday != nil {
		f.pEveryday = idx.everyday.ProbabilityWith(message, m)
		f.everyday = math.Exp(-o.Everyday * max(0, f.pEveryday-o.EverydayCentre))
	}
	// The coverage factor is (k/words)^(Coverage·g) for k covered words
	// and a skill's length share g; log(k/words) is computed once per
	// message, leaving one Exp per skill instead of a Pow.
	if ev.has != nil && f.words > 0 {
		f.logShare = make([]float64, int(f.words)+1)
		for k := range f.logShare {
			f.logShare[k] = math.Log(float64(k) / f.words)
		}
	}
	return f
}

// factors are one skill's skill-wide factors and the score they give. The
// anchor, coverage and semantic factors are kept as logarithms: scoring
// applies them as one Exp, and only an explanation needs each.
type factors struct {
	logAnchor, logCoverage, logSemantic float64
	covered                             int
	similarity                          float64
	evidence, score                     float64
}

// applyFactors applies the skill-wide factors to every skill's evidence,
// writing the scores, and each skill's factors to fs when it is not nil.
// One loop, no call per skill: in a large catalog this is most of the
// work of scoring.
func (idx *lexIndex) applyFactors(o LexicalOptions, ev *evidence, mf *facts, scores []float64, fs []factors) {
	anchors, has, blocks, sum := ev.anchors, ev.has, ev.blocks, ev.sum
	common := mf.known * mf.code * mf.everyday // the factors every skill gets
	coverage := has != nil && mf.words > 0
	for i, e := range sum {
		if e == 0 {
			continue // most skills of a large catalog share no term
		}
		var f factors
		// The anchor, coverage and semantic factors are powers of e,
		// applied as one Exp of their summed logarithms: an Exp per skill
		// is much of the time of scoring a large catalog.
		if anchors[i] == 0 {
			e *= o.Unanchored
		} else if o.Anchor > 0 {
			f.logAnchor = o.Anchor * float64(anchors[i]-1)
		}
		e *= common
		if idx.narrow != nil {
			e *= idx.narrow[i]
		}
		if coverage {
			for _, b := range has[i*blocks : (i+1)*blocks] {
				f.covered += bits.OnesCount64(b)
			}
			if f.covered == 0 {
				e = 0 // only pairs matched, which cover no word
			} else {
				f.logCoverage = o.Coverage * min(1, idx.lengths[i]/o.CoverageLen) * mf.logShare[min(f.covered, len(mf.logShare)-1)]
			}
		}
		if mf.meaning != nil && idx.hasVector[i] {
			dim := idx.vec.Dim()
			f.similarity = matchtext.Dot(mf.meaning, idx.vectors[i*dim:(i+1)*dim])
			f.logSemantic = o.Semantic * (f.similarity - o.SemanticCentre)
		}
		e *= math.Exp(min(f.logAnchor+f.logCoverage+f.logSemantic, 700)) // a huge strength must not overflow
		scores[i] = e / (e + o.Saturation)
		if math.IsInf(e, 1) {
			scores[i] = 1
		}
		if fs != nil {
			f.evidence, f.score = e, scores[i]
			fs[i] = f
		}
	}
}

// explanation reports skill i's score from what scoring computed.
func (idx *lexIndex) explanation(o LexicalOptions, i int, f factors, ev *evidence, mf *facts) Explanation {
	x := Explanation{
		Score: f.score, Evidence: f.evidence, Terms: ev.byTerm[i],
		Anchored: ev.anchors[i] > 0, Anchors: int(ev.anchors[i]), Anchor: 1,
		Known: mf.known, Code: mf.code, Words: int(mf.words), Coverage: 1, Semantic: 1,
		EverydayOn: idx.everyday != nil, EverydayProbability: mf.pEveryday, Everyday: mf.everyday,
		BreadthOn: idx.narrow != nil, Narrow: 1,
	}
	if idx.narrow != nil {
		x.Breadth, x.Narrow = idx.breadth[i], idx.narrow[i]
	}
	if ev.sum[i] == 0 {
		return x
	}
	if ev.anchors[i] > 0 && o.Anchor > 0 {
		x.Anchor = math.Exp(f.logAnchor)
	}
	if mf.meaning != nil && idx.hasVector[i] {
		x.Similarity, x.Semantic = f.similarity, math.Exp(f.logSemantic)
	}
	if ev.has != nil && mf.words > 0 {
		x.Coverage, x.Covered = 0, f.covered
		if f.covered > 0 {
			x.Coverage = math.Exp(f.logCoverage)
		}
	}
	sort.SliceStable(x.Terms, func(a, b int) bool { return x.Terms[a].Evidence > x.Terms[b].Evidence })
	return x
}

// hasCode reports whether message pastes code, markup or a formula: an
// inline code span between backticks, or a word that is code-shaped (see
// codeWord). A single character is not enough: prose has "=)" and "[sic]",
// and a link's query string has '='. Web addresses are left out: anyone
// pastes a link, on topic or not.
func hasCode(message string) bool {
	if i := strings.IndexByte(message, '`'); i >= 0 {
		if j := strings.IndexByte(message[i+1:], '`'); j > 0 && strings.TrimSpace(message[i+1:i+1+j]) != "" {
			return true
		}
	}
	for w := range strings.FieldsSeq(message) {
		if codeWord(withoutURL(w)) {
			return true
		}
	}
	return false
}

// codeWord reports whether a word is code-shaped: a backslash before a
// letter (a LaTeX command, a regular expression's \d, an escape), a
// formula ("=SUM(A1:A9)"), a template's double braces ("{{name}}",
// "${{"), or letters or digits with two or more of the kinds of marks that
// code and patterns use and prose does not: braces, square brackets, '^',
// '|' and '=' ("key={id}", "^[a-z]+$").
func codeWord(w string) bool {
	if len(w) > 1 && w[0] == '=' && isLetter(w[1]) || strings.Contains(w, "{{") || strings.Contains(w, "}}") {
		return true
	}
	var kinds uint8 // a bit for each kind of mark
	alnum := false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; c {
		case '\\':
			if i+1 < len(w) && isLetter(w[i+1]) {
				return true
			}
		case '{', '}':
			kinds |= 1
		case '[', ']':
			kinds |= 2
		case '^':
			kinds |= 4
		case '|':
			kinds |= 8
		case '=':
			kinds |= 16
		default:
			alnum = alnum || isLetter(c) || '0' <= c && c <= '9'
		}
	}
	return bits.OnesCount8(kinds) >= 2 && alnum
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// withoutURL returns the part of a word before a web address in it, so a
// link in brackets or quotes, or after a label, leaves what precedes it.
func withoutURL(w string) string {
	lower := strings.ToLower(w)
	for _, scheme := range []string{"http://", "https://", "ftp://", "www."} {
		if i := strings.Index(lower, scheme); i >= 0 {
			w, lower = w[:i], lower[:i]
		}
	}
	return w
}

// skillVector writes into dst a skill's word vector: the weighted mean
// of the centroids of its name and description and of its body, the body
// weighing bodyShare, so that its dot product with a message's vector is
// the same mean of the message's cosines with the two; or the one
// centroid that has a word in the table. It reports whether either had.
// Two parts, not one centroid of everything, so a long body does not
// drown what the skill says it is for. about is the name and
// description's centroid if hasAbout (Index has it already: it chooses
// the requests lent to the skill); part is scratch of dst's length.
func skillVector(w *matchtext.WordVectors, about []float32, hasAbout bool, body []matchtext.Term, bodyShare float64, dst, part []float32) bool {
	hasBody := w.Centroid(body, part)
	share := float32(bodyShare)
	switch {
	case hasAbout && hasBody:
		for k := range dst {
			dst[k] = (1-share)*about[k] + share*part[k]
		}
	case hasAbout:
		copy(dst, about)
	case hasBody:
		copy(dst, part)
	}
	return hasAbout || hasBody
}

// fields names where a posting's term occurs (see TermEvidence.Fields).
func (p posting) fields() []string {
	var f []string
	if p.inName {
		f = append(f, "name")
	}
	if p.inDescription {
		f = append(f, "description")
	}
	if p.where&(whereOutline|wherePart) != 0 && !p.inName && !p.inDescription {
		f = append(f, "outline")
	}
	if p.where&whereLent != 0 {
		f = append(f, "examples")
	}
	if p.body > 0 {
		f = append(f, "body")
	}
	return f
}

// wordOf is the message word a term stands for: the whole word of a part.
func wordOf(t matchtext.Term) string {
	if t.Whole != "" {
		return t.Whole
	}
	return t.Text
}

// DefaultLexicalOptions returns the options NewLexical uses for the zero
// value: every default written out. docs/matching-defaults.md is
// generated from it (tools/matchlab defaults).
func DefaultLexicalOptions() LexicalOptions { return LexicalOptions{}.withDefaults() }
