package main

import (
	"bytes"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/internal/matchtext"
)

// tuneSkills are two skills of topicCorpus's topics.
var tuneSkills = []match.Doc{
	{Name: "containers", Description: "docker container image", Body: "dockerfile registry layer volume compose kubernetes"},
	{Name: "payments", Description: "invoice refund payment", Body: "charge subscription customer card billing receipt"},
}

// tuneMargin is the mean, over examples with a skill, of a message's
// similarity to its skill less its similarity to the other one.
func tuneMargin(w *matchtext.WordVectors, examples []example) float64 {
	var sum float64
	var n int
	for _, e := range examples {
		if e.Skill < 0 {
			continue
		}
		sum += semanticSimilarity(w, e.Message, tuneSkills[e.Skill], 0.5) - semanticSimilarity(w, e.Message, tuneSkills[1-e.Skill], 0.5)
		n++
	}
	return sum / float64(n)
}

func TestTuneMovesMessagesTowardsTheirSkill(t *testing.T) {
	w := buildSmall(t)
	// Messages in the words both topics use, so that before tuning they
	// sit between the two skills; the labels give each set of words a side.
	examples := []example{
		{"setup config error", 0}, {"file system project", 0},
		{"update version output", 1}, {"guide example input", 1},
	}
	before := tuneMargin(w, examples)
	tuned, err := tuneVectors(w, tuneSkills, examples, tuneOptions{Epochs: 60, Batch: 4, Negatives: 1, Decay: 0.001, Rate: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	after := tuneMargin(tuned, examples)
	t.Logf("margin %.3f -> %.3f", before, after)
	if after < before+0.2 {
		t.Errorf("mean margin of the labelled messages %.2f before tuning, %.2f after: want a clear gain", before, after)
	}
	if tuned.Len() != w.Len() || tuned.Dim() != w.Dim() || !sameWords(tuned, w) {
		t.Error("tuning changed the table's words or counts")
	}
	// The same inputs give the same bytes.
	again, err := tuneVectors(w, tuneSkills, examples, tuneOptions{Epochs: 60, Batch: 4, Negatives: 1, Decay: 0.001, Rate: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	tuned.WriteTo(&a)
	again.WriteTo(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("tuning twice with the same inputs gave different tables")
	}
}

func TestTunePushesOffTopicMessagesAway(t *testing.T) {
	w := buildSmall(t)
	msg := "guide example input output"
	nearest := func(w *matchtext.WordVectors) float64 {
		return max(semanticSimilarity(w, msg, tuneSkills[0], 0.5), semanticSimilarity(w, msg, tuneSkills[1], 0.5))
	}
	before := nearest(w)
	tuned, err := tuneVectors(w, tuneSkills, []example{{msg, -1}}, tuneOptions{Epochs: 60, Batch: 1, Decay: 0.001, Rate: 0.02, OffTopic: 1, OffTopicMargin: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("nearest %.3f -> %.3f", before, nearest(tuned))
	if after := nearest(tuned); after > before-0.1 {
		t.Errorf("an off-topic message's similarity to its nearest skill: %.2f before tuning, %.2f after", before, after)
	}
}

func TestTuneErrors(t *testing.T) {
	w := buildSmall(t)
	for _, c := range []struct {
		name     string
		skills   []match.Doc
		examples []example
		want     string
	}{
		{"no skills", nil, []example{{"docker", -1}}, "no skills"},
		{"a label out of range", tuneSkills, []example{{"docker", 2}}, "example 0: skill 2 of 2"},
		{"no known word", tuneSkills, []example{{"xyzzy plugh", 0}}, "no example has a word in the table"},
	} {
		if _, err := tuneVectors(w, c.skills, c.examples, tuneOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// tuneLoss is the loss that tuner.gradient differentiates, computed
// directly from the map, for the gradient check.
func tuneLoss(t *tuner, sk []tuneSkill, batch []tuneItem, cand []int) float64 {
	d := t.dim
	centroid := func(c tuneText) []float64 {
		v := make([]float64, d)
		for j, i := range c.idx {
			r := make([]float64, d)
			for a := range d {
				r[a] = dotF(t.m[a*d:(a+1)*d], t.unit[int(i)*d:int(i+1)*d])
			}
			n := math.Sqrt(dotF(r, r))
			for a := range r {
				v[a] += c.idf[j] * r[a] / n
			}
		}
		n := math.Sqrt(dotF(v, v))
		if n == 0 {
			return nil
		}
		for a := range v {
			v[a] /= n
		}
		return v
	}
	tau := t.o.Temperature
	var loss float64
	for _, e := range batch {
		q := centroid(e.text)
		if q == nil {
			continue
		}
		var lse float64
		s := make([]float64, len(cand))
		for x, j := range cand {
			v, halves := make([]float64, d), 0.0
			for _, c := range []tuneText{sk[j].about, sk[j].body} {
				if h := centroid(c); h != nil {
					halves++
					for a := range v {
						v[a] += h[a]
					}
				}
			}
			s[x] = dotF(q, v) / max(halves, 1)
			lse += math.Exp(tau * s[x])
		}
		lse = math.Log(lse)
		if e.skill < 0 {
			loss += t.o.OffTopic * math.Log1p(math.Exp(lse-tau*t.o.OffTopicMargin))
			continue
		}
		for x, j := range cand {
			if j == e.skill {
				loss += lse - tau*s[x]
			}
		}
	}
	return loss
}

func TestTuneGradient(t *testing.T) {
	w := buildSmall(t)
	tn := newTuner(w, tuneOptions{Temperature: 5, OffTopic: 0.7, OffTopicMargin: 0.2}.withDefaults())
	// A skill with only a body and one with no known word, beside the two.
	docs := append(slices.Clone(tuneSkills), match.Doc{Name: "x", Body: "invoice docker layer"}, match.Doc{Name: "xyzzy", Description: "plugh"})
	var sk []tuneSkill
	for _, d := range docs {
		sk = append(sk, tuneSkill{tn.words(w.Rows(d.Name, d.Description)), tn.words(w.Rows(bodyText(d)))})
	}
	var batch []tuneItem
	for _, e := range []example{{"docker image setup", 0}, {"refund the charge", 1}, {"compose invoice", 2}, {"config error output", -1}, {"guide example", -1}} {
		batch = append(batch, tuneItem{tn.words(w.Rows(e.Message)), e.Skill})
	}
	rng := rand.New(rand.NewSource(3))
	for k := range tn.m {
		tn.m[k] += 0.3 * rng.NormFloat64()
	}
	cand := []int{0, 1, 2, 3}
	grad := tn.gradient(sk, batch, cand)
	const h = 1e-6
	for k := range tn.m {
		m := tn.m[k]
		tn.m[k] = m + h
		up := tuneLoss(tn, sk, batch, cand)
		tn.m[k] = m - h
		down := tuneLoss(tn, sk, batch, cand)
		tn.m[k] = m
		if num := (up - down) / (2 * h); math.Abs(num-grad[k]) > 1e-5*max(1, math.Abs(num)) {
			t.Errorf("d loss / d m[%d]: %.8f by the code, %.8f by differences", k, grad[k], num)
		}
	}
}

// A word whose row is zero has no direction: tuning leaves it out rather
// than spreading 0/0 through the map.
func TestTuneZeroRow(t *testing.T) {
	w := zeroRow(t, buildSmall(t), "docker")
	tuned, err := tuneVectors(w, tuneSkills, []example{{"docker image", 0}, {"refund invoice", 1}}, tuneOptions{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range tuned.Len() {
		if word, _ := tuned.Word(i); word != "docker" && tuned.Vector(word) == nil || word != "docker" && isZero(tuned.Vector(word)) {
			t.Fatalf("row of %q is zero after tuning", word)
		}
	}
}

// zeroRow returns w with word's row made zero.
func zeroRow(t *testing.T, w *matchtext.WordVectors, zero string) *matchtext.WordVectors {
	t.Helper()
	words, df, rows := make([]string, w.Len()), make([]int, w.Len()), make([][]float32, w.Len())
	for i := range words {
		words[i], df[i] = w.Word(i)
		rows[i] = w.Vector(words[i])
		if words[i] == zero {
			rows[i] = make([]float32, w.Dim())
		}
	}
	out, err := matchtext.NewWordVectors(w.Docs(), words, df, rows)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// sameWords reports whether a and b have the same words and counts.
func sameWords(a, b *matchtext.WordVectors) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		wa, da := a.Word(i)
		wb, db := b.Word(i)
		if wa != wb || da != db {
			return false
		}
	}
	return true
}

// semanticSimilarity is the semantic factor's similarity of a message
// and a skill: the mean of the message's similarities to the skill's
// name and description and to its body, the body weighing bodyShare (the
// one that has a word in the table, if only one has).
func semanticSimilarity(w *matchtext.WordVectors, message string, d match.Doc, bodyShare float64) float64 {
	var sum, n float64
	for k, part := range []string{d.Name + "\n" + d.Description, bodyText(d)} {
		weight := 1 - bodyShare
		if k == 1 {
			weight = bodyShare
		}
		if len(w.Rows(part)) > 0 {
			sum += weight * w.Similarity(message, part)
			n += weight
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}
