package match

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestExamplesRoundTrip(t *testing.T) {
	groups := []ExampleGroup{
		{Vector: []float32{1, 0, 0}, Messages: []string{"pull out  every\temail address", "", "# not a comment here", "@ nor a vector"}},
		{Vector: []float32{0, 0, 0}, Messages: []string{"a zero vector lends nothing"}},
		{Vector: []float32{0, 3, 4}, Messages: []string{"check ticket ids in commit messages", "find dates in a log"}},
		{Vector: []float32{0, 1, 0}, Messages: []string{"   "}},
	}
	e, err := ParseExamples(WriteExamples(groups))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"pull out every email address"}, {"check ticket ids in commit messages", "find dates in a log"}}
	if e.Len() != 2 || !slices.EqualFunc(e.groups, want, slices.Equal) {
		t.Fatalf("groups %q, want %q", e.groups, want)
	}
	// Vectors come back as unit vectors, within a byte's rounding.
	for k, x := range []float32{0, 0.6, 0.8} {
		if got := e.vecs[e.dim+k]; math.Abs(float64(got-x)) > 0.01 {
			t.Errorf("second vector [%d] = %.3f, want %.3f", k, got, x)
		}
	}
}

func TestParseExamplesErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"a message\n", "line 1: a message before the first vector"},
		{"@ AQID\n@ AQID\nm\n", "line 2: the group before has no message"},
		{"@ AQID\nm\n@ AQID\n", "the last group has no message"},
		{"@ !!\nm\n", "line 1: vector"},
		{"@ AQID\nm\n@ AQIDBA==\nm\n", "line 3: want a non-zero vector of 3 bytes, have 4 bytes"},
		{"@ AAAA\nm\n", "line 1: want a non-zero vector"},
		{"@\nm\n", "line 1: an empty vector"},
		{"@AQID\nm\n@ \n", "line 3: an empty vector"},
	} {
		_, err := ParseExamples(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseExamples(%q) = %v, want an error containing %q", c.text, err, c.want)
		}
	}
	if e, err := ParseExamples("# only a comment\n\n"); err != nil || e.Len() != 0 {
		t.Errorf("comment only: %v, %d groups", err, e.Len())
	}
}

// lend is the messages of the k groups nearest v, as Index lends them.
func (e *Examples) lend(v []float32, k int) []string {
	var out []string
	for _, g := range e.nearest(v, k) {
		out = append(out, e.groups[g]...)
	}
	return out
}

func TestExamplesLend(t *testing.T) {
	e, err := ParseExamples(WriteExamples([]ExampleGroup{
		{Vector: []float32{1, 0}, Messages: []string{"east"}},
		{Vector: []float32{0.8, 0.6}, Messages: []string{"east by north", "also east by north"}},
		{Vector: []float32{0.6, 0.8}, Messages: []string{"north by east"}},
		{Vector: []float32{0, 1}, Messages: []string{"north"}},
		{Vector: []float32{-1, 0}, Messages: []string{"west"}},
		{Vector: []float32{0.8, 0.6}, Messages: []string{"east by north again"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	east := []float32{1, 0}
	for _, c := range []struct {
		k    int
		want []string
	}{
		{0, nil},
		{1, []string{"east"}},
		{2, []string{"east", "east by north", "also east by north"}},
		// a tie keeps the file's order
		{3, []string{"east", "east by north", "also east by north", "east by north again"}},
		// north (cosine 0) and west (-1) are under the least cosine, 0.5
		{5, []string{"east", "east by north", "also east by north", "east by north again", "north by east"}},
	} {
		if got := e.lend(east, c.k); !slices.Equal(got, c.want) {
			t.Errorf("lend(east, %d) = %q, want %q", c.k, got, c.want)
		}
	}
	if got := e.lend([]float32{0.6, 0.8}, 2); !slices.Equal(got, []string{"north by east", "east by north", "also east by north"}) {
		t.Errorf("nearest first: got %q", got)
	}
	if got := e.lend([]float32{1, 0, 0}, 3); got != nil {
		t.Errorf("a vector of another length is lent %q", got)
	}
}

// The built-in requests are what tools/matchlab examples makes of the
// tune files: every message written for a skill that is not a background
// message, once, grouped by its skill, in file order, but for a message
// that starts with "@" or "#", which the file cannot hold (three do:
// annotations and scoped packages, such as "@Tool methods ..."). (The vectors need
// the registry checkout; their length and the table's must agree.)
func TestDefaultExamples(t *testing.T) {
	e, err := DefaultExamples()
	if err != nil {
		t.Fatal(err)
	}
	w, err := DefaultWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	if e.dim != w.Dim() {
		t.Fatalf("example vectors of %d dimensions, word vectors of %d", e.dim, w.Dim())
	}
	var want [][]string
	group := map[string]int{}
	for _, l := range readTuneMessages(t) {
		m := oneLine(l.Message)
		if l.Skill == nil || InBackground(m) || strings.HasPrefix(m, "@") || strings.HasPrefix(m, "#") {
			continue
		}
		g, ok := group[*l.Skill]
		if !ok {
			g = len(want)
			group[*l.Skill] = g
			want = append(want, nil)
		}
		want[g] = append(want[g], m)
	}
	if !slices.EqualFunc(e.groups, want, slices.Equal) {
		t.Fatalf("the built-in examples are %d groups, the tune files give %d: rebuild host/match/examples.txt (tools/matchlab/tune/README.md)", e.Len(), len(want))
	}
	background := map[string]bool{}
	for _, m := range DefaultBackground() {
		background[m] = true
	}
	for _, g := range e.groups {
		for _, m := range g {
			if background[m] {
				t.Fatalf("%q is lent and a background message", m)
			}
		}
	}
}

func TestLexicalExamples(t *testing.T) {
	w, err := DefaultWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	about := "regex-builder\nBuild, test and explain regular expressions: patterns, groups, lookahead."
	v, ok := w.TextVector(about)
	if !ok {
		t.Fatal("no vector for the regex skill")
	}
	far, _ := w.TextVector("kubernetes cluster autoscaling and node pools")
	bread, _ := w.TextVector("bread\nSourdough bread baking with a starter.")
	for _, c := range [][2][]float32{{v, far}, {bread, far}, {bread, v}} {
		if dot(c[0], c[1]) >= exampleSimilarity {
			t.Fatalf("the test's skills are too alike: cosine %.2f", dot(c[0], c[1]))
		}
	}
	set, err := ParseExamples(WriteExamples([]ExampleGroup{
		{Vector: v, Messages: []string{"pull out every email address from this text", "check that order numbers look like ORD-12345"}},
		{Vector: far, Messages: []string{"my email addresses bounce in a file"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	docs := []Doc{
		{Name: "regex-builder", Description: "Build, test and explain regular expressions: patterns, groups, lookahead."},
		{Name: "bread", Description: "Sourdough bread baking with a starter."},
	}
	explain := func(o LexicalOptions) []Explanation {
		t.Helper()
		o.ExampleSet, o.Breadth = set, -1
		l := NewLexical(o)
		if err := l.Index(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		ex, err := l.Explain(context.Background(), "extract the email addresses in a file")
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	off, on := explain(LexicalOptions{Examples: -1}), explain(LexicalOptions{Examples: 2})
	if off[0].Score != 0 || off[1].Score != 0 {
		t.Fatalf("without lent requests: scores %.3f, %.3f, want 0 (no shared word)", off[0].Score, off[1].Score)
	}
	if on[0].Score <= 0 {
		t.Fatal("the regex skill scores 0 with the requests lent to it")
	}
	// No group is near the bread skill, and the Kubernetes group is not
	// near the regex skill: the least cosine keeps strangers' requests
	// out, even where two groups may be lent.
	if on[1].Score != 0 {
		t.Errorf("the bread skill scores %.3f: it was lent requests", on[1].Score)
	}
	var fields []string
	for _, term := range on[0].Terms {
		switch term.Term {
		case "email":
			fields = term.Fields
		case "file":
			t.Errorf("file in regex-builder: lent from the Kubernetes group")
		}
	}
	if !slices.Equal(fields, []string{"examples"}) {
		t.Errorf("email in regex-builder: fields %v, want [examples]", fields)
	}
	// Lent words do not anchor a skill: only its name and description do.
	if on[0].Anchored {
		t.Error("the regex skill is anchored by lent words")
	}
}

// A term that is only a lesser part of a word of the description
// (TypeScript: script) is listed as the outline's, and, when it is in the
// lent requests too, as the examples' as well.
func TestExplainLentPart(t *testing.T) {
	w, err := DefaultWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	d := Doc{Name: "ts-build", Description: "Configure TypeScript compilers and bundlers."}
	v, ok := w.TextVector(d.Name + "\n" + d.Description)
	if !ok {
		t.Fatal("no vector")
	}
	set, err := ParseExamples(WriteExamples([]ExampleGroup{{Vector: v, Messages: []string{"my build script fails"}}}))
	if err != nil {
		t.Fatal(err)
	}
	fieldsOf := func(o LexicalOptions) []string {
		t.Helper()
		o.ExampleSet, o.Breadth = set, -1
		l := NewLexical(o)
		if err := l.Index(context.Background(), []Doc{d}); err != nil {
			t.Fatal(err)
		}
		ex, _ := l.Explain(context.Background(), "the script")
		for _, term := range ex[0].Terms {
			if term.Term == "script" {
				return term.Fields
			}
		}
		return nil
	}
	if got := fieldsOf(LexicalOptions{Examples: -1}); !slices.Equal(got, []string{"outline"}) {
		t.Errorf("none lent: fields %v, want [outline]", got)
	}
	if got := fieldsOf(LexicalOptions{Examples: 1}); !slices.Equal(got, []string{"outline", "examples"}) {
		t.Errorf("lent: fields %v, want [outline examples]", got)
	}
}

// The built-in requests' vectors are the built-in table's: with other
// word vectors and no requests of their own, nothing is lent.
func TestExamplesNeedTheirTable(t *testing.T) {
	w, err := DefaultWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	docs := []Doc{{Name: "regex-builder", Description: "Build, test and explain regular expressions."}}
	lengths := func(o LexicalOptions) float64 {
		t.Helper()
		o.Breadth = -1
		l := NewLexical(o)
		if err := l.Index(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		return l.idx.lengths[0]
	}
	none := lengths(LexicalOptions{Examples: -1})
	if lengths(LexicalOptions{Examples: 5}) == none {
		t.Fatal("the built-in requests lend nothing to a regular-expression skill")
	}
	if got := lengths(LexicalOptions{Examples: 5, Vectors: w}); got != none {
		t.Errorf("with given vectors and no requests of their own, the skill has length %.1f, want %.1f", got, none)
	}
}

// Texts scanned alone and joined give the terms of the texts joined by
// newlines, in the same order: Index analyses each lent group once and
// joins them. The texts are the lent requests and cases at the joins: a
// text that starts with a stop word or a negation, one of numbers only,
// one of nothing but an apostrophe's leftovers, compound words and
// identifiers.
func TestJoinScans(t *testing.T) {
	e, err := DefaultExamples()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"the build fails", "don't retry", "12", "'s", "", "TypeScript and SEV2 on node18",
		"work_mem tuning", "PDFs, APIs", "caf\u00e9 na\u00efve r\u00e9sum\u00e9", "export", "42 1234",
	}
	for g := 0; g < e.Len(); g += 97 {
		texts = append(texts, strings.Join(e.groups[g], "\n"))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + r.IntN(5)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = texts[r.IntN(len(texts))]
		}
		for _, pairs := range []bool{true, false} {
			scans := make([]scanned, n)
			for i, p := range parts {
				scans[i] = scan(p, nil, pairs)
			}
			want := analyze(strings.Join(parts, "\n"), nil, pairs)
			if got := joinScans(scans, pairs); !slices.Equal(got, want) {
				t.Fatalf("trial %d, pairs %v, %q:\njoined %v\nwhole  %v", trial, pairs, parts, got, want)
			}
		}
	}
}
