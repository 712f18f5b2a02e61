package match

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/internal/matchtext"
)

// Explain must tell the truth about Score: the same score for every skill
// and message, terms that add up to the evidence, and the factors that
// turned one into the other.
func TestExplainAgreesWithScore(t *testing.T) {
	for _, c := range []struct {
		name string
		o    LexicalOptions
	}{
		{"defaults", LexicalOptions{}},
		// Every factor's strength away from its default, the anchor factor
		// on and the body weighing more.
		{"other strengths", LexicalOptions{Anchor: 0.3, BodyShare: 0.6, Unanchored: 0.7, Unknown: 0.5, Coverage: 1.5, Semantic: 3, Code: 2,
			Everyday: 2, EverydayCentre: 0.2, Breadth: 0.8}},
	} {
		t.Run(c.name, func(t *testing.T) { explainAgreesWithScore(t, c.o) })
	}
}

func explainAgreesWithScore(t *testing.T, opts LexicalOptions) {
	cat := catalog.New([]string{longRoot})
	e := NewEngine(cat, NewLexical(opts), DefaultLexicalThreshold, 0)
	skills, err := e.indexed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l := e.m.(*Lexical)
	o := l.opts
	var checked int
	var c factorCounts
	classifier, err := matchtext.DefaultEveryday()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"../../testdata/match-long/tune.jsonl", "../../testdata/match-long/holdout2.jsonl"} {
		for _, lb := range readLabelsFile(t, path) {
			scores, _ := l.Score(context.Background(), lb.Message)
			ex, _ := l.Explain(context.Background(), lb.Message)
			if len(ex) != len(skills) {
				t.Fatalf("%d explanations for %d skills", len(ex), len(skills))
			}
			for i, x := range ex {
				if x.Score != scores[i] {
					t.Errorf("%q, %s: Explain says %.6f, Score %.6f", lb.Message, skills[i].Name, x.Score, scores[i])
				}
				if x.Score == 0 {
					continue
				}
				checked++
				checkExplanation(t, l, classifier, lb.Message, skills[i], i, x, &c)
			}
		}
	}
	if checked < 1000 || c.coded < 10 || c.everyday < 10 || c.narrow < 10 || (o.Anchor > 0) != (c.anchors > 10) {
		t.Fatalf("only %d scored pairs checked, %d of them for a message with code, %d for an everyday one, %d for a broad skill, %d with several anchors", checked, c.coded, c.everyday, c.narrow, c.anchors)
	}
}

// factorCounts count the checked pairs where each factor was at work.
type factorCounts struct{ coded, everyday, narrow, anchors int }

// checkExplanation checks one skill's explanation x for msg against each
// factor's definition, not the scoring code.
func checkExplanation(t *testing.T, l *Lexical, classifier *matchtext.Everyday, msg string, sk *skill.Skill, i int, x Explanation, c *factorCounts) {
	t.Helper()
	o := l.opts
	var sum float64
	for k, term := range x.Terms {
		sum += term.Evidence
		if k > 0 && term.Evidence > x.Terms[k-1].Evidence {
			t.Errorf("%q, %s: terms not sorted by evidence", msg, sk.Name)
		}
		if len(term.Fields) == 0 {
			t.Errorf("%q, %s: term %q is in no field", msg, sk.Name, term.Term)
		}
	}
	want := sum * x.Known * x.Code * x.Everyday * x.Narrow * x.Coverage * x.Semantic * x.Anchor
	// The anchor factor, from the terms' fields.
	var inAbout int
	for _, term := range x.Terms {
		if term.Fields[0] == "name" || term.Fields[0] == "description" {
			inAbout++
		}
	}
	wantAnchor := 1.0
	if inAbout > 1 && o.Anchor > 0 {
		wantAnchor = math.Exp(o.Anchor * float64(inAbout-1))
		c.anchors++
	}
	if x.Anchors != inAbout || x.Anchored != (inAbout > 0) || math.Abs(x.Anchor-wantAnchor) > 1e-12 {
		t.Errorf("%q, %s: %d terms in the name or description (anchored %v), factor %.6f; want %d, %.6f", msg, sk.Name, x.Anchors, x.Anchored, x.Anchor, inAbout, wantAnchor)
	}
	// The breadth factor, from the skill's breadth.
	if !x.BreadthOn || math.Abs(breadthFactor(x.Breadth, o.Breadth, o.BreadthCentre)-x.Narrow) > 1e-12 {
		t.Errorf("%q, %s: breadth %.6f (on %v), factor %.6f", msg, sk.Name, x.Breadth, x.BreadthOn, x.Narrow)
	}
	if x.Narrow < 1 {
		c.narrow++
	}
	// The everyday factor, from the classifier's public Probability.
	p := classifier.Probability(msg)
	if math.Abs(p-x.EverydayProbability) > 1e-12 || math.Abs(math.Exp(-o.Everyday*max(0, p-o.EverydayCentre))-x.Everyday) > 1e-12 {
		t.Errorf("%q, %s: everyday probability %.6f (want %.6f), factor %.6f", msg, sk.Name, x.EverydayProbability, p, x.Everyday)
	}
	if x.Everyday < 1 {
		c.everyday++
	}
	wantCode := 1.0
	if hasCode(msg) {
		wantCode = o.Code
		c.coded++
	}
	if x.Code != wantCode {
		t.Errorf("%q, %s: code factor %v, want %v", msg, sk.Name, x.Code, wantCode)
	}
	// The semantic factor, from the skill's two halves.
	if sim := semanticSimilarity(l.idx.vec, msg, docOf(sk), o.BodyShare); math.Abs(sim-x.Similarity) > 1e-5 ||
		math.Abs(math.Exp(o.Semantic*(x.Similarity-o.SemanticCentre))-x.Semantic) > 1e-9 {
		t.Errorf("%q, %s: similarity %.6f (want %.6f), factor %.6f", msg, sk.Name, x.Similarity, sim, x.Semantic)
	}
	// The coverage factor, from its definition rather than the code.
	g := min(1, l.idx.lengths[i]/o.CoverageLen)
	if f := math.Pow(min(1, float64(x.Covered)/float64(x.Words)), o.Coverage*g); x.Covered == 0 || math.Abs(f-x.Coverage) > 1e-9 {
		t.Errorf("%q, %s: %d of %d words covered, factor %.6f, want %.6f", msg, sk.Name, x.Covered, x.Words, x.Coverage, f)
	}
	if !x.Anchored {
		want *= o.Unanchored
	}
	if math.Abs(want-x.Evidence) > 1e-9 || math.Abs(x.Evidence/(x.Evidence+o.Saturation)-x.Score) > 1e-9 {
		t.Errorf("%q, %s: terms sum to %.6f, factors give %.6f, evidence %.6f, score %.6f",
			msg, sk.Name, sum, want, x.Evidence, x.Score)
	}
}

// semanticSimilarity is the mean of the cosines between message and a
// skill's name and description and between message and its body, the
// body weighing bodyShare (the one that has a word in the table, if only
// one has), from the public Similarity rather than the index.
func semanticSimilarity(w *matchtext.WordVectors, message string, d Doc, bodyShare float64) float64 {
	f := fields(d)
	var sum, n float64
	for k, part := range []string{f[fieldName] + "\n" + f[fieldDescription], f[fieldBody]} {
		weight := 1 - bodyShare
		if k == 1 {
			weight = bodyShare
		}
		probe := make([]float32, w.Dim())
		if w.Centroid(matchtext.Analyze(part, nil, false), probe) {
			sum += weight * w.Similarity(message, part)
			n += weight
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

func TestExplainFields(t *testing.T) {
	docs := []Doc{
		{Name: "latex-papers", Description: "Write papers in LaTeX.", Body: "## Bibliography\nUse biber for the bibliography.\n"},
		{Name: "charts", Description: "Plot data.", Body: "Export a chart with latex labels.\n"},
	}
	l := NewLexical(LexicalOptions{Examples: -1}) // examples_test.go has that field
	if err := l.Index(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	ex, _ := l.Explain(context.Background(), "latex bibliography")
	fields := map[string][]string{}
	for _, term := range ex[0].Terms {
		fields[term.Term] = term.Fields
	}
	if got := fields["latex"]; len(got) < 2 || got[0] != "name" || got[1] != "description" {
		t.Errorf("latex in latex-papers: fields %v, want name and description first", got)
	}
	if got := fields["bibliographi"]; len(got) != 2 || got[0] != "outline" || got[1] != "body" {
		t.Errorf("bibliography in latex-papers: fields %v, want outline and body", got)
	}
	if !ex[0].Anchored || ex[1].Anchored {
		t.Errorf("anchored: latex-papers %v, charts %v; want true, false", ex[0].Anchored, ex[1].Anchored)
	}
}

func TestEngineExplain(t *testing.T) {
	cat := catalog.New(corpusRoots)
	e := NewEngine(cat, NewLexical(LexicalOptions{}), DefaultLexicalThreshold, 0)
	msg := "count the words in my essay"
	ex, err := e.Explain(context.Background(), msg, 2)
	if err != nil {
		t.Fatal(err)
	}
	matched, err := e.Match(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 2 || len(matched) == 0 || ex[0].Skill != matched[0].Skill || !ex[0].Matched || ex[0].Score != matched[0].Score {
		t.Fatalf("Explain's first skill %v does not agree with Match's %v", ex, matched)
	}
	// Every skill that shares a term is explained, matched or not.
	all, _ := e.Explain(context.Background(), msg, 0)
	var below int
	for _, x := range all {
		if !x.Matched {
			below++
		}
	}
	if below == 0 {
		t.Error("no skill below the threshold was explained")
	}
	hy := NewEngine(cat, &Hybrid{Lexical: NewLexical(LexicalOptions{}), Embedding: NewLexical(LexicalOptions{})}, 0.5, 0)
	if _, err := hy.Explain(context.Background(), msg, 0); !errors.Is(err, ErrNoExplanation) {
		t.Errorf("hybrid Explain: %v, want ErrNoExplanation", err)
	}
}

// filler returns n distinct made-up words, so a test can give a skill a
// length without giving it any word of the messages.
func filler(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "zq%c%c%c ", 'a'+i/676%26, 'a'+i/26%26, 'a'+i%26)
	}
	return b.String()
}

// The coverage factor scales a skill that has few of the message's words
// by how long the skill is: a long skill that lacks them is evidence
// against it, a short one hardly.
func TestCoverageFactor(t *testing.T) {
	docs := []Doc{
		{Name: "latex-long", Description: "Typeset papers in LaTeX.", Body: filler(1500)},
		{Name: "latex-short", Description: "Typeset papers in LaTeX.", Body: filler(40)},
		{Name: "gloves", Description: "Nitrile gloves for the bathroom.", Body: filler(1500)},
	}
	score := func(opts LexicalOptions, msg string) []Explanation {
		l := NewLexical(opts)
		if err := l.Index(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		ex, _ := l.Explain(context.Background(), msg)
		return ex
	}
	msg := "latex nitrile gloves bathroom"
	// Lent requests would lengthen the skills, and the lengths are the point.
	on, off := score(LexicalOptions{Examples: -1}, msg), score(LexicalOptions{Coverage: -1, Examples: -1}, msg)
	if on[0].Covered != 1 || on[0].Words != 4 || on[2].Covered != 3 {
		t.Fatalf("covered: latex-long %d of %d, gloves %d; want 1 of 4 and 3", on[0].Covered, on[0].Words, on[2].Covered)
	}
	// Full power for a skill of 1,500 tokens: (1/4)^Coverage.
	if want := math.Pow(0.25, defaultCoverage); math.Abs(on[0].Coverage-want) > 1e-9 {
		t.Errorf("latex-long factor %.4f, want %.4f", on[0].Coverage, want)
	}
	// A skill of about 50 tokens gets about a twentieth of the power,
	// less than a tenth.
	if lo := math.Pow(0.25, defaultCoverage/10); on[1].Coverage < lo || on[1].Coverage >= 1 {
		t.Errorf("latex-short factor %.4f, want in [%.4f, 1)", on[1].Coverage, lo)
	}
	if on[0].Score >= off[0].Score || on[1].Score <= on[0].Score {
		t.Errorf("latex-long %.3f (without the factor %.3f), latex-short %.3f: want long < short and long below its score without the factor",
			on[0].Score, off[0].Score, on[1].Score)
	}
	if off[0].Coverage != 1 {
		t.Errorf("with Coverage -1 the factor is %.3f, want 1", off[0].Coverage)
	}
	// A skill that has every word of the message loses nothing.
	all := score(LexicalOptions{}, "nitrile gloves bathroom")
	if all[2].Coverage != 1 {
		t.Errorf("gloves has every word, factor %.3f, want 1", all[2].Coverage)
	}
}
