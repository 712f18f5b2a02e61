package match

import (
	"bytes"
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
		sum += semanticSimilarity(w, e.Message, tuneSkills[e.Skill]) - semanticSimilarity(w, e.Message, tuneSkills[1-e.Skill])
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
		return max(semanticSimilarity(w, msg, tuneSkills[0]), semanticSimilarity(w, msg, tuneSkills[1]))
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
