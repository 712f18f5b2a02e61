package match

import (
	"context"
	"slices"
	"testing"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// lend is the messages of the k groups nearest v, as Index lends them.
// The built-in requests are what tools/matchlab examples makes of the
// tune files: every message written for a skill that is not a background
// message, once, grouped by its skill, in file order, but for a message
// that starts with "@" or "#", which the file cannot hold (three do:
// annotations and scoped packages, such as "@Tool methods ..."). (The vectors need
// the registry checkout; their length and the table's must agree.)
func TestLexicalExamples(t *testing.T) {
	w, err := matchtext.DefaultWordVectors()
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
		if matchtext.Dot(c[0], c[1]) >= matchtext.ExampleSimilarity {
			t.Fatalf("the test's skills are too alike: cosine %.2f", matchtext.Dot(c[0], c[1]))
		}
	}
	set, err := matchtext.ParseExamples(matchtext.WriteExamples([]matchtext.ExampleGroup{
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
	w, err := matchtext.DefaultWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	d := Doc{Name: "ts-build", Description: "Configure TypeScript compilers and bundlers."}
	v, ok := w.TextVector(d.Name + "\n" + d.Description)
	if !ok {
		t.Fatal("no vector")
	}
	set, err := matchtext.ParseExamples(matchtext.WriteExamples([]matchtext.ExampleGroup{{Vector: v, Messages: []string{"my build script fails"}}}))
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
	w, err := matchtext.DefaultWordVectors()
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
