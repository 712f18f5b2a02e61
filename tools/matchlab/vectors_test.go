package main

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// topicCorpus is a corpus of two topics whose words never meet: documents
// about containers and documents about payments, each a random draw of its
// topic's words and of words common to both.
func topicCorpus(docs int) []string {
	containers := strings.Fields("docker container image dockerfile registry layer volume compose kubernetes pod cluster node")
	payments := strings.Fields("invoice refund payment charge subscription customer card billing receipt tax currency dispute")
	common := strings.Fields("file setup config error guide example version update output input system project")
	rng := rand.New(rand.NewSource(7))
	var out []string
	for i := range docs {
		topic := containers
		if i%2 == 1 {
			topic = payments
		}
		var b strings.Builder
		for range 200 {
			if rng.Intn(3) == 0 {
				b.WriteString(common[rng.Intn(len(common))])
			} else {
				b.WriteString(topic[rng.Intn(len(topic))])
			}
			b.WriteByte(' ')
		}
		out = append(out, b.String())
	}
	return out
}

func buildSmall(t *testing.T) *matchtext.WordVectors {
	t.Helper()
	w, err := buildVectors(slices.Values(topicCorpus(200)), vectorOptions{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestBuildVectorsSeparatesTopics(t *testing.T) {
	w := buildSmall(t)
	if w.Dim() != 8 || w.Len() != 36 {
		t.Fatalf("table of %d words in %d dimensions, want 36 in 8", w.Len(), w.Dim())
	}
	// Stems, as the table keys them.
	same := [][2]string{{"docker", "contain"}, {"imag", "registri"}, {"invoic", "refund"}, {"payment", "subscript"}}
	cross := [][2]string{{"docker", "invoic"}, {"contain", "refund"}, {"imag", "payment"}, {"registri", "subscript"}}
	for i := range same {
		s, c := vecCosine(w, same[i][0], same[i][1]), vecCosine(w, cross[i][0], cross[i][1])
		if s < -1 || c < -1 {
			t.Fatalf("missing word in %v or %v", same[i], cross[i])
		}
		if s < c+0.3 {
			t.Errorf("cos%v = %.2f is not clearly above cos%v = %.2f", same[i], s, cross[i], c)
		}
	}
	if got, want := w.Similarity("the docker image will not build", "dockerfile and compose"), w.Similarity("the docker image will not build", "refund the invoice"); got <= want {
		t.Errorf("text similarity: same topic %.2f, other topic %.2f", got, want)
	}
	if got := w.Similarity("docker image", "xyzzy plugh"); got != 0 {
		t.Errorf("similarity with a text of no known word = %v, want 0", got)
	}
}

func TestBuildVectorsIsReproducible(t *testing.T) {
	var a, b bytes.Buffer
	if _, err := buildSmall(t).WriteTo(&a); err != nil {
		t.Fatal(err)
	}
	if _, err := buildSmall(t).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two builds from the same corpus differ")
	}
}

func TestBuildVectorsErrors(t *testing.T) {
	if _, err := buildVectors(slices.Values([]string(nil)), vectorOptions{}); err == nil || !strings.Contains(err.Error(), "no documents") {
		t.Errorf("empty corpus: %v", err)
	}
	if _, err := buildVectors(slices.Values([]string{"one two three"}), vectorOptions{}); err == nil || !strings.Contains(err.Error(), "fewer words than dimensions") {
		t.Errorf("tiny corpus: %v", err)
	}
}

func vecCosine(w *matchtext.WordVectors, a, b string) float64 {
	va, vb := w.Vector(a), w.Vector(b)
	if va == nil || vb == nil {
		return -2
	}
	var s float64
	for k := range va {
		s += float64(va[k]) * float64(vb[k])
	}
	return s
}
