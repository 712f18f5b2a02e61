package match

import (
	"bytes"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// buildSmall is a hand-made table of two topics, containers and
// payments, plus words common to both: each topic's words point near one
// axis, the common words between them, each word a little apart from its
// neighbours. It is the shape a table learned from such a corpus has
// (tools/matchlab checks that its builder learns it).
func buildSmall(t testing.TB) *matchtext.WordVectors {
	t.Helper()
	topics := [][]string{
		strings.Fields("docker container image dockerfile registry layer volume compose kubernetes pod cluster node"),
		strings.Fields("invoice refund payment charge subscription customer card billing receipt tax currency dispute"),
		strings.Fields("file setup config error guide example version update output input system project"),
	}
	rng := rand.New(rand.NewSource(7))
	var words []string
	var df []int
	var rows [][]float32
	seen := map[string]bool{}
	for k, topic := range topics {
		for _, word := range topic {
			stem := matchtext.Tokens(word)[0]
			if seen[stem] {
				continue
			}
			seen[stem] = true
			v := make([]float32, 8)
			switch k {
			case 0, 1:
				v[k] = 1
			default:
				v[0], v[1] = 0.7, 0.7
			}
			for d := 2; d < 8; d++ {
				v[d] = float32(rng.NormFloat64() * 0.15)
			}
			words, df, rows = append(words, stem), append(df, 50+len(words)), append(rows, v)
		}
	}
	w, err := matchtext.NewWordVectors(200, words, df, rows)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func vecCosine(w *matchtext.WordVectors, a, b string) float64 {
	va, vb := w.Vector(a), w.Vector(b)
	if va == nil || vb == nil {
		return -2
	}
	return matchtext.Dot(va, vb)
}

func TestNewWordVectors(t *testing.T) {
	w := buildSmall(t)
	if w.Dim() != 8 || w.Len() != 36 || w.Docs() != 200 {
		t.Fatalf("table of %d words in %d dimensions from %d documents", w.Len(), w.Dim(), w.Docs())
	}
	if word, df := w.Word(0); word != "docker" || df != 50 {
		t.Errorf("Word(0) = %q, %d", word, df)
	}
	if got := w.Rows("the docker image", "docker volume xyzzy"); len(got) != 3 {
		t.Errorf("Rows gave %v, want docker, image and volume once each", got)
	}
	for _, c := range []struct {
		name  string
		docs  int
		words []string
		df    []int
		rows  [][]float32
		want  string
	}{
		{"twice", 2, []string{"a", "a"}, []int{1, 1}, [][]float32{{1}, {1}}, "twice"},
		{"count", 2, []string{"a"}, []int{3}, [][]float32{{1}}, "3 documents of 2"},
		{"lengths", 2, []string{"a", "b"}, []int{1, 1}, [][]float32{{1}, {1, 2}}, "2 dimensions, want 1"},
		{"mismatch", 2, []string{"a"}, []int{1, 1}, [][]float32{{1}}, "1 words, 2 counts"},
	} {
		if _, err := matchtext.NewWordVectors(c.docs, c.words, c.df, c.rows); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

func TestWordVectorsRoundTrip(t *testing.T) {
	w := buildSmall(t)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := matchtext.ReadWordVectors(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != w.Len() || r.Dim() != w.Dim() || r.Docs() != w.Docs() {
		t.Fatalf("read %d×%d from %d docs, wrote %d×%d from %d", r.Len(), r.Dim(), r.Docs(), w.Len(), w.Dim(), w.Docs())
	}
	if !reflect.DeepEqual(r, w) {
		t.Error("the table read differs from the table written")
	}
	for i := range w.Len() {
		word, _ := w.Word(i)
		if v := r.Vector(word); math.Abs(matchtext.Dot(v, v)-1) > 1e-5 {
			t.Errorf("%s: |v|² = %v, want 1", word, matchtext.Dot(v, v))
		}
	}
}

func TestReadWordVectorsRejects(t *testing.T) {
	var buf bytes.Buffer
	if _, err := buildSmall(t).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	header := good[:bytes.IndexByte(good, '\n')+1]
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "header"},
		{"other file", []byte("PK\x03\x04 zip\n"), "not a skillhost word-vector table"},
		{"future version", []byte("skillhost-wordvec 2 1 8 10\n"), "format version 2"},
		{"huge", []byte("skillhost-wordvec 1 1 99999 10\n"), "implausible size"},
		{"too many documents", []byte("skillhost-wordvec 1 1 8 4294967296\n"), "implausible size"},
		{"truncated", good[:len(good)-3], "unexpected EOF"},
		{"trailing", append(slices.Clone(good), 0), "data after the last word"},
		{"short", append(slices.Clone(header), 0), "do not fit"},
		{"empty word", append([]byte("skillhost-wordvec 1 1 8 10\n\x00"), make([]byte, 9)...), "bad length"},
		{"bad frequency", append([]byte("skillhost-wordvec 1 1 8 10\n\x01a\x0b"), make([]byte, 8)...), "bad document frequency"},
		{"twice", append([]byte("skillhost-wordvec 1 2 2 10\n\x01a\x01\x01\x01\x01a\x01\x01\x01"), 0), "twice"},
	} {
		_, err := matchtext.ReadWordVectors(bytes.NewReader(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// The built-in table keeps apart the topics of the realistic skills.
func TestDefaultWordVectors(t *testing.T) {
	w, err := matchtext.DefaultWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	if w.Len() < 10000 || w.Dim() != 100 {
		t.Fatalf("built-in table: %d words of %d dimensions", w.Len(), w.Dim())
	}
	for _, c := range []struct{ message, near, far string }{
		{"my container image is 2 GB", "docker dockerfile layers", "invoices refunds and payments"},
		{"customer was charged twice", "invoices refunds and payments", "docker dockerfile layers"},
	} {
		near, far := w.Similarity(c.message, c.near), w.Similarity(c.message, c.far)
		if near <= far {
			t.Errorf("%q: similarity to %q %.2f, to %q %.2f", c.message, c.near, near, c.far, far)
		}
	}
	// A message that shares a skill's word in another sense is further
	// from the skill than one about what the skill does.
	for _, c := range []struct{ skill, on, off string }{
		{"latex-papers: write and typeset academic papers in LaTeX with BibTeX citations, figures and tables",
			"the latex build fails with undefined citation warnings", "latex or nitrile gloves for cleaning the bathroom"},
		{"terraform-infra: plan and apply infrastructure as code with Terraform modules, state and providers",
			"terraform plan wants to destroy my subnet", "how do I terraform the slope in my backyard into raised garden beds"},
		{"data-charts: build bar, line and scatter charts of data with matplotlib and plotly",
			"plot monthly sales as a stacked bar chart", "how do I read a knitting chart full of symbols"},
	} {
		on, off := w.Similarity(c.on, c.skill), w.Similarity(c.off, c.skill)
		if on <= off+0.1 {
			t.Errorf("%s: on-topic %q %.2f, off-topic %q %.2f", c.skill[:strings.IndexByte(c.skill, ':')], c.on, on, c.off, off)
		}
	}
}

func FuzzReadWordVectors(f *testing.F) {
	var buf bytes.Buffer
	w := buildSmall(f)
	w.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte("skillhost-wordvec 1 1 4 1\n\x01a\x01\x01\x02\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := matchtext.ReadWordVectors(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := range w.Len() {
			word, _ := w.Word(i)
			v := w.Vector(word)
			if len(v) != w.Dim() {
				t.Fatalf("%q: vector of %d, want %d", word, len(v), w.Dim())
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("%q: component %v", word, x)
				}
			}
		}
		if s := w.Similarity("a b c", "a"); math.IsNaN(s) || s < -1.0001 || s > 1.0001 {
			t.Fatalf("similarity %v", s)
		}
		// What is read writes back to the same table.
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		again, err := matchtext.ReadWordVectors(&buf)
		if err != nil || !reflect.DeepEqual(again, w) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
