package match

import (
	"bytes"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// tuneSkills are two skills of topicCorpus's topics.
var tuneSkills = []Doc{
	{Name: "containers", Description: "docker container image", Body: "dockerfile registry layer volume compose kubernetes"},
	{Name: "payments", Description: "invoice refund payment", Body: "charge subscription customer card billing receipt"},
}

// tuneMargin is the mean, over examples with a skill, of a message's
// similarity to its skill less its similarity to the other one.
func tuneMargin(w *WordVectors, examples []TuneExample) float64 {
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
	examples := []TuneExample{
		{"setup config error", 0}, {"file system project", 0},
		{"update version output", 1}, {"guide example input", 1},
	}
	before := tuneMargin(w, examples)
	tuned, err := w.Tune(tuneSkills, examples, TuneOptions{Epochs: 60, Batch: 4, Negatives: 1, Decay: 0.001, Rate: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	after := tuneMargin(tuned, examples)
	t.Logf("margin %.3f -> %.3f", before, after)
	if after < before+0.2 {
		t.Errorf("mean margin of the labelled messages %.2f before tuning, %.2f after: want a clear gain", before, after)
	}
	if tuned.Len() != w.Len() || tuned.Dim() != w.Dim() || !slices.Equal(tuned.words, w.words) || !slices.Equal(tuned.df, w.df) {
		t.Error("tuning changed the table's words or counts")
	}
	// The same inputs give the same bytes.
	again, err := w.Tune(tuneSkills, examples, TuneOptions{Epochs: 60, Batch: 4, Negatives: 1, Decay: 0.001, Rate: 0.02})
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
	nearest := func(w *WordVectors) float64 {
		return max(semanticSimilarity(w, msg, tuneSkills[0], 0.5), semanticSimilarity(w, msg, tuneSkills[1], 0.5))
	}
	before := nearest(w)
	tuned, err := w.Tune(tuneSkills, []TuneExample{{msg, -1}}, TuneOptions{Epochs: 60, Batch: 1, Decay: 0.001, Rate: 0.02, OffTopic: 1, OffTopicMargin: 0.01})
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
		skills   []Doc
		examples []TuneExample
		want     string
	}{
		{"no skills", nil, []TuneExample{{"docker", -1}}, "no skills"},
		{"a label out of range", tuneSkills, []TuneExample{{"docker", 2}}, "example 0: skill 2 of 2"},
		{"no known word", tuneSkills, []TuneExample{{"xyzzy plugh", 0}}, "no example has a word in the table"},
	} {
		if _, err := w.Tune(c.skills, c.examples, TuneOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// tuneLoss is the loss that tuner.gradient differentiates, computed
// directly from the map, for the gradient check.
func tuneLoss(t *tuner, sk []tuneSkill, batch []tuneExample, cand []int) float64 {
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
	tn := newTuner(w, TuneOptions{Temperature: 5, OffTopic: 0.7, OffTopicMargin: 0.2}.withDefaults())
	// A skill with only a body and one with no known word, beside the two.
	docs := append(slices.Clone(tuneSkills), Doc{Name: "x", Body: "invoice docker layer"}, Doc{Name: "xyzzy", Description: "plugh"})
	var sk []tuneSkill
	for _, d := range docs {
		f := fields(d)
		sk = append(sk, tuneSkill{tn.words(append(analyze(f[fieldName], nil, false), analyze(f[fieldDescription], nil, false)...)), tn.words(analyze(f[fieldBody], nil, false))})
	}
	var batch []tuneExample
	for _, e := range []TuneExample{{"docker image setup", 0}, {"refund the charge", 1}, {"compose invoice", 2}, {"config error output", -1}, {"guide example", -1}} {
		batch = append(batch, tuneExample{tn.words(analyze(e.Message, nil, false)), e.Skill})
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
	w := buildSmall(t)
	clear(w.row(w.index["docker"]))
	w.derive()
	tuned, err := w.Tune(tuneSkills, []TuneExample{{"docker image", 0}, {"refund invoice", 1}}, TuneOptions{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, word := range tuned.words {
		if word != "docker" && tuned.inv[i] == 0 {
			t.Fatalf("row of %q is zero after tuning", word)
		}
	}
}
