package match

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// lexicalOf returns a lexical matcher with opts that has indexed docs.
func lexicalOf(t *testing.T, docs []Doc, opts LexicalOptions) *Lexical {
	t.Helper()
	l := NewLexical(opts)
	if err := l.Index(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	return l
}

func scoreOf(t *testing.T, docs []Doc, message string) []float64 {
	t.Helper()
	s, err := lexicalOf(t, docs, LexicalOptions{}).Score(context.Background(), message)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var pdfDoc = Doc{Name: "pdf-tools", Description: "Merge and split PDF files.", Body: "# Merging\nUse qpdf to merge files."}

// A skill's score for words only it has does not depend on which other
// skills are installed or how long they are: lengths are normalised
// against fixed references, not the catalog's average. (Requests lent
// by published skills are off: they give the other skills words too.)
func TestLexicalScoreIndependentOfCatalog(t *testing.T) {
	long := strings.Repeat("Summarize the columns and rows of a table with statistics. ", 300)
	scoreOf := func(t *testing.T, docs []Doc, message string) []float64 {
		s, err := lexicalOf(t, docs, LexicalOptions{Examples: -1}).Score(context.Background(), message)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	small := scoreOf(t, []Doc{pdfDoc, {Name: "csv-summary", Description: "Summarize CSV files."}}, "merge a PDF")
	large := scoreOf(t, []Doc{pdfDoc,
		{Name: "csv-summary", Description: "Summarize CSV files.", Body: long},
		{Name: "stats", Description: "Statistics of tables.", Body: long + long},
		{Name: "git-history", Description: "Explain a repository's history.", Body: long}}, "merge a PDF")
	if small[0] == 0 || small[0] != large[0] {
		t.Fatalf("pdf-tools scored %v with a small catalog and %v with a large one", small[0], large[0])
	}
}

// A word repeated all over a long body counts far less than the same word
// in a description: fields saturate together and the body weighs little.
func TestLexicalLongBodyDoesNotDominate(t *testing.T) {
	docs := []Doc{
		{Name: "query-builder", Description: "Build SQL queries for reports."},
		{Name: "api-reference", Description: "Reference of the HTTP API endpoints.", Body: strings.Repeat("The query parameter filters results. ", 60)},
		{Name: "other", Description: "Something else entirely."},
	}
	s := scoreOf(t, docs, "build a query")
	if s[0] <= s[1] {
		t.Fatalf("description match %.3f should beat a body repeating the word %.3f", s[0], s[1])
	}
}

// A skill with no message word in its name or description (an anchor)
// scores half its evidence, so a long body's chance words rarely reach
// the threshold.
func TestLexicalAnchor(t *testing.T) {
	docs := []Doc{
		{Name: "terraform", Description: "Infrastructure as code for clouds.", Body: "Use for_each instead of count for stable keys."},
		{Name: "other", Description: "Something else entirely."},
	}
	opts := LexicalOptions{}
	l := NewLexical(opts)
	_ = l.Index(context.Background(), docs)
	anchoredOff := NewLexical(LexicalOptions{Unanchored: 1})
	_ = anchoredOff.Index(context.Background(), docs)
	a, _ := l.Score(context.Background(), "switching from count to for_each")
	b, _ := anchoredOff.Score(context.Background(), "switching from count to for_each")
	if a[0] <= 0 || a[0] >= b[0] {
		t.Fatalf("unanchored skill scored %.3f, %.3f without the discount: want lower but positive", a[0], b[0])
	}
}

// Each message term in a skill's name or description beyond the first
// multiplies its evidence by exp(Anchor): a message that names two of the
// things a skill says it is for is likelier to be for it than one that
// shares one word. With the factor off, or a single anchor, nothing
// changes.
func TestLexicalAnchorTerms(t *testing.T) {
	docs := []Doc{
		{Name: "billing", Description: "Refund an invoice.", Body: "Refunds go through the payments API."},
		{Name: "other", Description: "Something else entirely."},
	}
	// The other factors depend on the catalog alone, not on Anchor; the
	// breadth factor is off because breadth is measured with Anchor too.
	base := LexicalOptions{Examples: -1, Semantic: -1, Breadth: -1, Anchor: -1}
	withAnchor := base
	withAnchor.Anchor = 0.4
	for _, c := range []struct {
		message string
		anchors int
	}{
		{"refund this invoice", 2},
		{"refund the payments", 1},
	} {
		on, _ := lexicalOf(t, docs, withAnchor).Explain(context.Background(), c.message)
		off, _ := lexicalOf(t, docs, base).Explain(context.Background(), c.message)
		want := math.Exp(0.4 * float64(c.anchors-1))
		if on[0].Anchors != c.anchors || off[0].Anchors != c.anchors {
			t.Errorf("%q: %d and %d anchors, want %d", c.message, on[0].Anchors, off[0].Anchors, c.anchors)
		}
		if math.Abs(on[0].Anchor-want) > 1e-12 || off[0].Anchor != 1 {
			t.Errorf("%q: factor %v on, %v off; want %v and 1", c.message, on[0].Anchor, off[0].Anchor, want)
		}
		if got := on[0].Evidence / off[0].Evidence; math.Abs(got-want) > 1e-9 {
			t.Errorf("%q: evidence %v with the factor, %v without: ratio %v, want %v", c.message, on[0].Evidence, off[0].Evidence, got, want)
		}
	}
}

// BodyShare weighs the body's cosine against the name and description's:
// at 0 the skill is compared by its name and description alone, at 1 by
// its body, and in between by the weighted mean (one half is the mean
// the semantic factor has always used).
func TestLexicalBodyShare(t *testing.T) {
	vectors := buildSmall(t) // two topics: containers and payments
	// A description on one topic, a body on the other.
	doc := Doc{Name: "docker-images", Description: "Build a docker image, its layers and registry.", Body: "Charge a customer, handle a dispute, a receipt and tax."}
	const message = "the docker image for the customer refund receipt"
	about := vectors.Similarity(message, doc.Name+"\n"+doc.Description)
	body := vectors.Similarity(message, doc.Body)
	if math.Abs(about-body) < 0.1 {
		t.Fatalf("the halves are too alike to tell apart: %.3f and %.3f", about, body)
	}
	for _, share := range []float64{-1, 0.25, 0.5, 0.9, 1, 3} {
		ex, _ := lexicalOf(t, []Doc{doc}, LexicalOptions{Vectors: vectors, BodyShare: share}).Explain(context.Background(), message)
		w := min(max(share, 0), 1) // a share is at most 1
		if want := (1-w)*about + w*body; math.Abs(ex[0].Similarity-want) > 1e-5 {
			t.Errorf("body share %v: similarity %.4f, want %.4f", share, ex[0].Similarity, want)
		}
	}
	// With only one part in the table, that part is the vector, whatever
	// the share.
	for _, c := range []struct {
		name string
		doc  Doc
		want float64
	}{
		{"only a body", Doc{Name: "qzx", Description: "Plugh xyzzy.", Body: doc.Body}, body},
		{"no body", Doc{Name: doc.Name, Description: doc.Description}, about},
	} {
		for _, share := range []float64{0.25, 0.85} {
			ex, _ := lexicalOf(t, []Doc{c.doc, {Name: "docker", Description: "docker image customer"}}, LexicalOptions{Vectors: vectors, BodyShare: share}).Explain(context.Background(), message)
			if ex[0].Score > 0 && math.Abs(ex[0].Similarity-c.want) > 1e-5 {
				t.Errorf("%s, share %v: similarity %.4f, want %.4f", c.name, share, ex[0].Similarity, c.want)
			}
			if ex[0].Score == 0 {
				t.Errorf("%s: no score, so no similarity to check", c.name)
			}
		}
	}
}

// Messages mostly made of words no skill uses are discounted, in a catalog
// with enough vocabulary to tell.
func TestLexicalUnknownWords(t *testing.T) {
	var vocab strings.Builder
	for i := 0; i < 700; i++ { // a catalog vocabulary above Vocabulary
		w := []byte{'v'}
		for v := i; ; v /= 26 {
			w = append(w, byte('a'+v%26))
			if v < 26 {
				break
			}
		}
		vocab.Write(w)
		vocab.WriteString("z ")
	}
	docs := []Doc{
		{Name: "incident-review", Description: "Write the review of an outage or a near miss."},
		{Name: "glossary", Description: "Words.", Body: vocab.String()},
	}
	known := scoreOf(t, docs, "review the outage")[0]
	hiking := scoreOf(t, docs, "recommend a hiking trail near Boulder")[0]
	if hiking <= 0 || hiking >= DefaultLexicalThreshold || known < DefaultLexicalThreshold {
		t.Fatalf("on-topic %.3f, hiking trail %.3f; threshold %.4f", known, hiking, DefaultLexicalThreshold)
	}
}

// A word with a number (SEV2, python3) is the word at a level or version:
// it scores as the word does, and is not an unknown word when the catalog
// has the word without the number. A case-change compound still gives its
// parts at reduced weight.
func TestLexicalWordWithNumber(t *testing.T) {
	var vocab strings.Builder
	for i := 0; i < 700; i++ { // enough vocabulary for unknown words to count
		fmt.Fprintf(&vocab, "v%c%c%cz ", 'a'+i%26, 'a'+i/26%26, 'a'+i/676)
	}
	docs := []Doc{
		{Name: "incident-review", Description: "Write the review after a SEV or an outage."},
		{Name: "glossary", Description: "Words.", Body: vocab.String()},
	}
	plain := scoreOf(t, docs, "the review of the SEV outage")[0]
	numbered := scoreOf(t, docs, "the review of the SEV2 outage")[0]
	if plain < DefaultLexicalThreshold || numbered != plain {
		t.Fatalf("SEV2 scored %.3f, SEV %.3f: want the same, at or above %.3f", numbered, plain, DefaultLexicalThreshold)
	}
	got := matchtext.Analyze("SEV2 TypeScript", nil, false)
	want := []matchtext.Term{{Text: "sev2", Weight: 1}, {Text: "sev", Weight: 1, Whole: "sev2"},
		{Text: "typescript", Weight: 1}, {Text: "type", Weight: matchtext.PartWeight, Whole: "typescript"}, {Text: "script", Weight: matchtext.PartWeight, Whole: "typescript"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("analyze = %+v, want %+v", got, want)
	}
}

// A lesser part of a compound word in a description does not anchor the
// skill: "TypeScript" says nothing of a message about a Python "script".
// The whole word does.
func TestLexicalCompoundPartDoesNotAnchor(t *testing.T) {
	docs := []Doc{
		{Name: "react-components", Description: "Build React components in TypeScript.", Body: "Run the script in a loop."},
		{Name: "other", Description: "Something else entirely."},
	}
	score := func(unanchored float64, message string) float64 {
		// Breadth off: the two discounts would measure the skill's
		// breadth differently.
		l := NewLexical(LexicalOptions{Unanchored: unanchored, Breadth: -1})
		if err := l.Index(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		s, err := l.Score(context.Background(), message)
		if err != nil {
			t.Fatal(err)
		}
		return s[0]
	}
	if a, b := score(0, "my script"), score(1, "my script"); a <= 0 || a >= b {
		t.Errorf("a part of TypeScript anchored the skill: %.3f with the discount, %.3f without", a, b)
	}
	if a, b := score(0, "my TypeScript types"), score(1, "my TypeScript types"); a != b {
		t.Errorf("the whole word did not anchor the skill: %.3f with the discount, %.3f without", a, b)
	}
}

// The semantic factor lowers a skill whose word a message shares in
// another sense, raises one the message is about, leaves alone a message
// with no word in the table, and is what Explain says it is.
func TestLexicalSemanticFactor(t *testing.T) {
	vectors := buildSmall(t) // two topics: containers and payments
	docs := []Doc{
		{Name: "docker-images", Description: "Build a docker image, its layers and registry.", Body: "A dockerfile, compose, volume and cluster."},
		{Name: "billing", Description: "Invoices, refunds and card payments.", Body: "Charge a customer, handle a dispute, a receipt and tax."},
	}
	score := func(o LexicalOptions, message string) ([]float64, []Explanation) {
		t.Helper()
		l := lexicalOf(t, docs, o)
		ex, err := l.Explain(context.Background(), message)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := l.Score(context.Background(), message)
		return s, ex
	}
	// Breadth off: with the factor on and off, the skills' breadths
	// would differ too.
	on := LexicalOptions{Semantic: 4, SemanticCentre: 0.6, Vectors: vectors, Breadth: -1}
	off := LexicalOptions{Semantic: -1, Vectors: vectors, Breadth: -1}

	// "image" is the docker skill's word, but the rest of the message is
	// about payments.
	const mixed = "the image on the customer invoice and the refund receipt"
	withF, ex := score(on, mixed)
	without, _ := score(off, mixed)
	if withF[0] >= without[0] {
		t.Errorf("docker-images for %q: %.3f with the factor, %.3f without; want lower", mixed, withF[0], without[0])
	}
	if withF[1] <= without[1] {
		t.Errorf("billing for %q: %.3f with the factor, %.3f without; want higher", mixed, withF[1], without[1])
	}
	for i, d := range docs {
		sim := ex[i].Similarity
		if want := math.Exp(4 * (sim - 0.6)); math.Abs(ex[i].Semantic-want) > 1e-9 {
			t.Errorf("%s: factor %v, want exp(4·(%.3f−0.6)) = %v", d.Name, ex[i].Semantic, sim, want)
		}
		if math.Abs(ex[i].Score-withF[i]) > 1e-12 {
			t.Errorf("%s: Explain's score %v, Score's %v", d.Name, ex[i].Score, withF[i])
		}
	}

	// No word of this message is in the table: the factor stays out.
	const unknown = "qpdf merges pages"
	docs = append(docs, Doc{Name: "pdf-tools", Description: "qpdf merges pages.", Body: "A docker image of qpdf."})
	withF, ex = score(on, unknown)
	without, _ = score(off, unknown)
	if withF[2] == 0 || withF[2] != without[2] || ex[2].Semantic != 1 {
		t.Errorf("message without vectors: %.3f with the factor (x%v), %.3f without", withF[2], ex[2].Semantic, without[2])
	}
}

// A skill whose body has no word in the table (empty, code, another
// language) is compared by its name and description alone, not held to
// half a cosine; one with no word in the table at all is left as it is.
func TestLexicalSemanticFactorHalves(t *testing.T) {
	vectors := buildSmall(t)
	o := LexicalOptions{Semantic: 4, SemanticCentre: 0.6, Vectors: vectors}
	for _, c := range []struct {
		name, message string
		doc           Doc
		want          func(ex Explanation) bool
	}{
		{"no body", "refund the invoice payment", Doc{Name: "billing", Description: "Refund the invoice payment."},
			func(ex Explanation) bool { return ex.Similarity > 0.9 && ex.Semantic > 1 }},
		{"body of words not in the table", "refund the invoice payment",
			Doc{Name: "billing", Description: "Refund the invoice payment.", Body: "qzx vvrt plugh xyzzy"},
			func(ex Explanation) bool { return ex.Similarity > 0.9 && ex.Semantic > 1 }},
		{"no word in the table", "plugh xyzzy and a refund", Doc{Name: "qzx", Description: "Plugh xyzzy."},
			func(ex Explanation) bool { return ex.Score > 0 && ex.Semantic == 1 }},
	} {
		l := NewLexical(o)
		if err := l.Index(context.Background(), []Doc{c.doc}); err != nil {
			t.Fatal(err)
		}
		ex, _ := l.Explain(context.Background(), c.message)
		if len(ex) != 1 || !c.want(ex[0]) {
			t.Errorf("%s: score %.3f, similarity %.3f, factor %.3f", c.name, ex[0].Score, ex[0].Similarity, ex[0].Semantic)
		}
	}
}

// However strong the factor, a score stays a number in [0, 1].
func TestLexicalSemanticFactorHuge(t *testing.T) {
	l := NewLexical(LexicalOptions{Semantic: 5000, SemanticCentre: -1, Vectors: buildSmall(t)})
	if err := l.Index(context.Background(), []Doc{{Name: "billing", Description: "Refund the invoice payment."}}); err != nil {
		t.Fatal(err)
	}
	s, _ := l.Score(context.Background(), "refund the invoice payment")
	if math.IsNaN(s[0]) || s[0] < 0 || s[0] > 1 {
		t.Fatalf("score %v", s[0])
	}
}

func TestHasCode(t *testing.T) {
	for _, c := range []struct {
		message string
		want    bool
	}{
		// Code, markup and formulas.
		{`Undefined control sequence \mathbb`, true},
		{"what does ^(?=.*\\d).{8,}$ do", true},
		{"what does ^[a-z]+$ match", true},
		{"=VLOOKUP(A2, Sheet2!A:B, 2, FALSE) gives #N/A", true},
		{"the code has `n == 1 ? 'file' : 'files'`", true},
		{"render <Row key={i} /> in a loop", true},
		{"grep 'a|b' vs 'a|[bc]'", true},
		{"f(x)=x^2 has no root", true},
		{"${{ secrets.TOKEN }} is empty", true},
		// Prose, one mark, and links.
		{"Summarise the plot of Hamlet in five sentences.", false},
		{"my dentist says I owe $640 for a 5+ year old filling <sigh> *again*", false},
		{"thanks, that worked =)", false},
		{"^_^ and :-| and [sic]", false},
		{"1 USD = 0.92 EUR today", false},
		{"rock | paper | scissors", false},
		{"solve 3x + 7 = 22 and 2x^2 for my son", false},
		{"WHERE tenant_id = $1 is slow", false},
		{"a lone ` backtick", false},
		{"summarise https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42 for me", false},
		{"is (HTTPS://example.com/a?b=c|d) safe to open", false},
		{"see [the docs](https://x.test/?a=b) first", false},
		{"www.example.com/search?q=x[1]^2 is slow", false},
		{"https://x.test/?a=b returns =SUM(A1) as text", true},
		{"", false},
	} {
		if got := hasCode(c.message); got != c.want {
			t.Errorf("hasCode(%q) = %v, want %v", c.message, got, c.want)
		}
	}
}

// The code factor scales every skill's evidence alike for a message with
// code in it, so the ranking stands and only scores move; without code, or
// with the factor off, nothing changes.
func TestLexicalCodeFactor(t *testing.T) {
	docs := []Doc{
		{Name: "latex-papers", Description: "Write papers in LaTeX: packages, math, bibliography.", Body: "Load amssymb for blackboard bold.\n"},
		{Name: "charts", Description: "Plot data.", Body: "Math labels on a chart.\n"},
	}
	const code = `Undefined control sequence \mathbb in my math`
	const prose = "which package gives blackboard bold in my math"
	for _, c := range []struct {
		name    string
		factor  float64
		message string
		want    float64
	}{
		{"code, factor 3", 3, code, 3},
		{"prose, factor 3", 3, prose, 1},
		{"code, factor off", -1, code, 1},
		{"code, default", 0, code, defaultCode},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkWholeFactor(t, docs, c.message, LexicalOptions{Code: -1}, LexicalOptions{Code: c.factor},
				func(x Explanation) float64 { return x.Code }, c.want)
		})
	}
}

// checkWholeFactor checks a factor that scales every skill's evidence
// alike: with on, each skill reports the factor want (through factor) and
// has want times the evidence it has with off, and some skill scores, so
// the check is not empty.
func checkWholeFactor(t *testing.T, docs []Doc, message string, off, on LexicalOptions, factor func(Explanation) float64, want float64) {
	t.Helper()
	explain := func(o LexicalOptions) []Explanation {
		ex, err := lexicalOf(t, docs, o).Explain(context.Background(), message)
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	without, with := explain(off), explain(on)
	scored := 0
	for i := range with {
		if f := factor(with[i]); math.Abs(f-want) > 1e-9 {
			t.Errorf("%s: factor %v, want %v", docs[i].Name, f, want)
		}
		if without[i].Evidence == 0 {
			continue
		}
		scored++
		if got := with[i].Evidence / without[i].Evidence; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: evidence %.4f with the factor, %.4f without: x%.4f, want x%v", docs[i].Name, with[i].Evidence, without[i].Evidence, got, want)
		}
	}
	if scored == 0 {
		t.Fatal("no skill scored: the test checks nothing")
	}
}
