package match

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/catalog"
)

// The quality floors, set from measurement (see the README): the test
// fails if a change makes matching worse than this on the labelled set.
const (
	floorHit1       = 0.70
	floorHit3       = 0.78
	floorMRR        = 0.74
	ceilFalseMatch  = 0.15
	labelledFile    = "../../testdata/match/labelled.yaml"
	matchCorpusNote = "examples/skills, testdata/match/skills and testdata/skills"
)

var corpusRoots = []string{"../../examples/skills", "../../testdata/match/skills", "../../testdata/skills"}

// shortFloorsHold reports whether metrics on the short fixtures keep
// their floors, as a tuning search must.
func shortFloorsHold(s Metrics) bool {
	return s.Hit1 >= floorHit1 && s.Hit3 >= floorHit3 && s.MRR >= floorMRR && 1-s.Abstain <= ceilFalseMatch
}

type labelled struct {
	Message string `yaml:"message"`
	Expect  string `yaml:"expect"`
}

func loadLabelled(t testing.TB) []labelled {
	t.Helper()
	data, err := os.ReadFile(labelledFile)
	if err != nil {
		t.Fatal(err)
	}
	var set []labelled
	if err := yaml.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	return set
}

type metrics struct {
	positives, negatives      int
	hit1, hit3, mrr, falseHit float64
	misses                    []string
}

// evaluate runs every labelled message through the engine. Hits count only
// matches above the threshold: what an agent would actually be given.
func evaluate(t testing.TB, e *Engine, set []labelled) metrics {
	var m metrics
	for _, l := range set {
		got, err := e.Match(context.Background(), l.Message)
		if err != nil {
			t.Fatal(err)
		}
		if l.Expect == "none" {
			m.negatives++
			if len(got) > 0 {
				m.falseHit++
				m.misses = append(m.misses, fmt.Sprintf("off-topic %q matched %s (%.2f)", l.Message, got[0].Skill.Name, got[0].Score))
			}
			continue
		}
		m.positives++
		rank := 0
		for i, g := range got {
			if g.Skill.Name == l.Expect {
				rank = i + 1
				break
			}
		}
		switch {
		case rank == 1:
			m.hit1++
			m.hit3++
		case rank > 0 && rank <= 3:
			m.hit3++
		}
		if rank > 0 {
			m.mrr += 1 / float64(rank)
		}
		if rank != 1 {
			top := "nothing"
			if len(got) > 0 {
				top = fmt.Sprintf("%s (%.2f)", got[0].Skill.Name, got[0].Score)
			}
			m.misses = append(m.misses, fmt.Sprintf("%q: want %s at rank 1, got rank %d, top %s", l.Message, l.Expect, rank, top))
		}
	}
	m.hit1 /= float64(m.positives)
	m.hit3 /= float64(m.positives)
	m.mrr /= float64(m.positives)
	m.falseHit /= float64(m.negatives)
	return m
}

func TestQuality(t *testing.T) {
	set := loadLabelled(t)
	if len(set) < 40 {
		t.Fatalf("the labelled set has %d messages; at least 40 are required", len(set))
	}
	cat := catalog.New(corpusRoots)
	e := NewEngine(cat, NewLexical(LexicalOptions{}), DefaultLexicalThreshold, 0)
	m := evaluate(t, e, set)
	t.Logf("lexical matcher on %d skills (%s), %d messages (%d on-topic, %d off-topic), threshold %.4f:",
		len(cat.All()), matchCorpusNote, len(set), m.positives, m.negatives, DefaultLexicalThreshold)
	t.Logf("  Hit@1 %.3f  Hit@3 %.3f  MRR %.3f  off-topic false-match rate %.3f", m.hit1, m.hit3, m.mrr, m.falseHit)
	for _, miss := range m.misses {
		t.Logf("  miss: %s", miss)
	}
	if m.hit1 < floorHit1 || m.hit3 < floorHit3 || m.mrr < floorMRR || m.falseHit > ceilFalseMatch {
		t.Errorf("quality below the floors (Hit@1 %.2f, Hit@3 %.2f, MRR %.2f, false matches at most %.2f)", floorHit1, floorHit3, floorMRR, ceilFalseMatch)
	}
}

// asLabels converts the short-fixture set to evaluation labels.
func asLabels(set []labelled) []Label {
	out := make([]Label, len(set))
	for i, l := range set {
		out[i] = Label{Message: l.Message, Expect: l.Expect, Line: i + 1}
		if l.Expect == "none" {
			out[i].Expect = ""
		}
	}
	return out
}

// The realistic set: skills the size and shape of published ones (long
// bodies with code, API tables and several sections) and messages as
// users write them, split into a tune half (parameters were chosen on it)
// and a test half (held out; reported, never tuned on).
const (
	longRoot = "../../testdata/match-long/skills"
	longTune = "../../testdata/match-long/tune.jsonl"
	// longHoldout was written blind, by someone who saw only the skills,
	// and committed before it was scored: the two halves above have been
	// read for errors while the matcher was changed, so their numbers are
	// no longer held out.
	longHoldout = "../../testdata/match-long/holdout.jsonl"
	// longHoldout2 was written blind the same way after longHoldout had
	// been scored and read; it was committed before it was scored, and
	// scored once with the defaults unchanged and once with a candidate
	// weight that was then rejected (docs/matching.md). Nothing is tuned
	// on it.
	longHoldout2 = "../../testdata/match-long/holdout2.jsonl"
	// longHoldout3 was written blind by a third writer, committed, and
	// scored once with the defaults unchanged; no decision depended on it.
	longHoldout3 = "../../testdata/match-long/holdout3.jsonl"
	// longHoldout4 decided, once, on a first coverage factor, which was
	// then not adopted for losing on anthropics/skills (docs/matching.md).
	longHoldout4 = "../../testdata/match-long/holdout4.jsonl"
	// longHoldout5 decided, once, on the coverage factor of the defaults,
	// chosen on the six sets above; it is the only one of these sets that
	// those defaults were not chosen on.
	longHoldout5 = "../../testdata/match-long/holdout5.jsonl"
	// longHoldout6 and longHoldout7 were written blind by two more
	// writers, committed, and decided, once and taken together, on the
	// semantic factor chosen on the seven sets above (docs/matching.md).
	longHoldout6 = "../../testdata/match-long/holdout6.jsonl"
	longHoldout7 = "../../testdata/match-long/holdout7.jsonl"
	// longHoldout8 and longHoldout9 were written blind after the semantic
	// factor was adopted, committed, and scored once with the defaults
	// unchanged: a measurement, no decision (docs/matching.md).
	longHoldout8 = "../../testdata/match-long/holdout8.jsonl"
	longHoldout9 = "../../testdata/match-long/holdout9.jsonl"
	// longHoldout10 to longHoldout13 were written blind by four more
	// writers, committed, and, with no candidate registered for them,
	// scored once with the defaults unchanged: a measurement, no decision
	// (docs/matching.md).
	longHoldout10 = "../../testdata/match-long/holdout10.jsonl"
	longHoldout13 = "../../testdata/match-long/holdout13.jsonl"
	// longHoldout14 and longHoldout15 were written blind, committed, and
	// scored once: they decided against candidate C, word vectors tuned on
	// labelled messages (docs/matching.md).
	longHoldout14 = "../../testdata/match-long/holdout14.jsonl"
	longHoldout15 = "../../testdata/match-long/holdout15.jsonl"
	// longHoldout16 to longHoldout19 were written blind, committed, and
	// scored once: they decided against candidate C2, the tuned word
	// vectors with more data (docs/matching.md).
	longHoldout16 = "../../testdata/match-long/holdout16.jsonl"
	longHoldout19 = "../../testdata/match-long/holdout19.jsonl"
	// longHoldout20 to longHoldout23 were written blind, committed, and
	// scored once: they decided for candidate D, the code factor
	// (docs/matching.md).
	longHoldout20 = "../../testdata/match-long/holdout20.jsonl"
	longHoldout23 = "../../testdata/match-long/holdout23.jsonl"
	// longHoldout24 to longHoldout27 were written blind, committed, and
	// scored once: a measurement of the defaults and a check that the code
	// factor holds (docs/matching.md).
	longHoldout24 = "../../testdata/match-long/holdout24.jsonl"
	longHoldout27 = "../../testdata/match-long/holdout27.jsonl"
	// longHoldout28 to longHoldout31 were written blind, committed, and
	// scored once: a check of the stricter code factor (docs/matching.md).
	longHoldout28 = "../../testdata/match-long/holdout28.jsonl"
	longHoldout31 = "../../testdata/match-long/holdout31.jsonl"
	// longHoldout32 to longHoldout35 were written blind, committed, and
	// scored once: they decided for the everyday factor (docs/matching.md).
	longHoldout32 = "../../testdata/match-long/holdout32.jsonl"
	longHoldout35 = "../../testdata/match-long/holdout35.jsonl"
	// longHoldout36 to longHoldout39 were written blind, committed, and
	// scored once: they decided for the breadth factor (docs/matching.md).
	longHoldout36 = "../../testdata/match-long/holdout36.jsonl"
	longHoldout39 = "../../testdata/match-long/holdout39.jsonl"
	// longHoldout40 to longHoldout43 were written blind, committed, and
	// scored once: they decided for the requests lent by published skills
	// (docs/matching.md).
	longHoldout40 = "../../testdata/match-long/holdout40.jsonl"
	longHoldout43 = "../../testdata/match-long/holdout43.jsonl"
	// longHoldout44 to longHoldout47 were written blind, committed, and
	// scored once: they decided against the first fit of the factors'
	// strengths (docs/matching.md).
	longHoldout44 = "../../testdata/match-long/holdout44.jsonl"
	longHoldout47 = "../../testdata/match-long/holdout47.jsonl"
	// longHoldout48 to longHoldout51 were written blind, committed, and
	// scored once: they decided for the second fit (docs/matching.md).
	longHoldout48 = "../../testdata/match-long/holdout48.jsonl"
	longHoldout51 = "../../testdata/match-long/holdout51.jsonl"
)

// floorSet is a labelled set and the quality the defaults must keep on it.
type floorSet struct {
	path  string
	floor Metrics
}

// floorsFile holds the floors of every labelled set, by path under
// testdata/: the test fails if a change makes matching worse than a
// set's floor. Sets under match-long/ use longRoot's catalog; those under
// match-anthropics/ need SKILLHOST_ANTHROPICS.
const floorsFile = "../../testdata/match-floors.tsv"

// readFloors reads the floors of the sets whose path starts with prefix.
func readFloors(t testing.TB, prefix string) []floorSet {
	t.Helper()
	data, err := os.ReadFile(floorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []floorSet
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		var m Metrics
		if len(f) != 4 {
			t.Fatalf("%s:%d: want 4 tab-separated fields", floorsFile, i+1)
		}
		for j, dst := range []*float64{&m.Hit1, &m.MRR, &m.Abstain} {
			v, err := strconv.ParseFloat(f[j+1], 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", floorsFile, i+1, err)
			}
			*dst = v
		}
		if strings.HasPrefix(f[0], prefix) {
			out = append(out, floorSet{path: "../../testdata/" + f[0], floor: m})
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no sets under %s", floorsFile, prefix)
	}
	return out
}

func TestQualityLong(t *testing.T) {
	checkFloors(t, catalog.New([]string{longRoot}), readFloors(t, "match-long/"))
}

// checkFloors scores each set with the default matcher and threshold on
// cat, logs the result and the misses, and fails a set below its floor.
func checkFloors(t *testing.T, cat *catalog.Catalog, sets []floorSet) {
	t.Helper()
	for _, set := range sets {
		e := NewEngine(cat, NewLexical(LexicalOptions{}), DefaultLexicalThreshold, 0)
		ev, err := Evaluate(context.Background(), e, readLabelsFile(t, set.path), set.path)
		if err != nil {
			t.Fatal(err)
		}
		m, f := ev.At(DefaultLexicalThreshold), set.floor
		t.Logf("%s: %d skills, %d on-topic, %d off-topic, threshold %.4f: Hit@1 %.3f  Hit@3 %.3f  MRR %.3f  abstain %.3f",
			set.path, ev.Skills, m.OnTopic, m.OffTopic, DefaultLexicalThreshold, m.Hit1, m.Hit3, m.MRR, m.Abstain)
		for _, o := range ev.Misses(DefaultLexicalThreshold) {
			t.Logf("  miss: %q want %q rank %d (%.3f), top %v", o.Label.Message, o.Label.Expect, o.Rank, o.Score, o.Top)
		}
		if m.Hit1 < f.Hit1 || m.MRR < f.MRR || m.Abstain < f.Abstain {
			t.Errorf("%s: quality below the floors (Hit@1 %.2f, MRR %.2f, abstain %.2f)", set.path, f.Hit1, f.MRR, f.Abstain)
		}
	}
}

// tuneMessage is a labelled message of tools/wordvec/tune: Skill is nil
// for a message written for no skill.
type tuneMessage struct {
	Message string  `json:"message"`
	Skill   *string `json:"skill"`
}

// readTuneMessages reads every message of tools/wordvec/tune, in file
// order.
func readTuneMessages(t *testing.T) []tuneMessage {
	t.Helper()
	files, err := filepath.Glob("../../tools/wordvec/tune/batch*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tune files: %v", err)
	}
	var out []tuneMessage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			var l tuneMessage
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, l)
		}
	}
	return out
}

// longSetsThrough is the realistic sets in the order they were written
// (the floors file's order), from the tune half up to and including last.
func longSetsThrough(t testing.TB, last string) []string {
	var out []string
	for _, f := range readFloors(t, "match-long/") {
		out = append(out, f.path)
		if f.path == last {
			return out
		}
	}
	t.Fatalf("longSetsThrough: %s is not in %s", last, floorsFile)
	return nil
}

// TestQualityAnthropics measures the defaults on a second catalog, the 17
// public skills of anthropics/skills, which cannot be committed: it runs
// only when SKILLHOST_ANTHROPICS names their folder, fetched at the commit
// testdata/match-anthropics/README.md gives.
func TestQualityAnthropics(t *testing.T) {
	dir := os.Getenv("SKILLHOST_ANTHROPICS")
	if dir == "" {
		t.Skip("set SKILLHOST_ANTHROPICS to the skills folder of anthropics/skills (testdata/match-anthropics/README.md)")
	}
	cat := catalog.New([]string{dir})
	if n := len(cat.All()); n != 17 {
		t.Fatalf("SKILLHOST_ANTHROPICS=%s: %d skills, want the 17 of anthropics/skills", dir, n)
	}
	checkFloors(t, cat, readFloors(t, "match-anthropics/"))
}
