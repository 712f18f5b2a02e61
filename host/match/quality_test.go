package match

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// TestTune searches parameters on the tune half of the realistic set,
// keeping only those that also hold the short-fixture floors, and prints
// the best. It runs only with SKILLHOST_TUNE=1 and is how the defaults were
// chosen; the test half is never looked at here.
func TestTune(t *testing.T) {
	if os.Getenv("SKILLHOST_TUNE") == "" {
		t.Skip("set SKILLHOST_TUNE=1 to search parameters")
	}
	// SKILLHOST_TUNE=swap searches on the test half instead, to see how
	// much the choice depends on the half (two-fold cross-validation);
	// SKILLHOST_TUNE=both on both halves. The defaults come from the tune
	// half; the blind holdout set is never looked at here.
	tunePath := longTune
	switch os.Getenv("SKILLHOST_TUNE") {
	case "swap":
		tunePath = longTest
	case "both":
		tunePath = longTune + "+test"
	}
	var tune []Label
	if tunePath == longTune+"+test" {
		tune = append(readLabelsFile(t, longTune), readLabelsFile(t, longTest)...)
	} else {
		tune = readLabelsFile(t, tunePath)
	}
	short := asLabels(loadLabelled(t))
	longCat := catalog.New([]string{longRoot})
	shortCat := catalog.New(corpusRoots)
	// Saturation and threshold are one parameter (e/(e+s) >= t is
	// e >= s*t/(1-t)), so saturation stays fixed and thresholds vary.
	var thresholds []float64
	for th := 0.1; th < 0.7; th += 0.025 {
		thresholds = append(thresholds, th)
	}
	// The last grid searched; earlier ones settled the name, outline and
	// reference lengths (zero in a grid is written -1: zero is default).
	var grid []LexicalOptions
	for _, bw := range []float64{0.5, 1, 1.5} {
		for _, bb := range []float64{0.5, 1} {
			for _, bidf := range []float64{-1, 1, 2, 3} {
				for _, nb := range []float64{-1, 0.5} {
					for _, un := range []float64{-1, 0.5, 1} {
						for _, unk := range []float64{-1, 1, 2} {
							grid = append(grid, LexicalOptions{Body: FieldOptions{Weight: bw, B: bb},
								BodyIDF: bidf, NameBonus: nb, Unanchored: un, Unknown: unk})
						}
					}
				}
			}
		}
	}
	type row struct {
		desc  string
		score float64
	}
	var rows []row
	for _, opts := range grid {
		evLong, err := Evaluate(context.Background(), NewEngine(longCat, NewLexical(opts), 0, 0), tune, tunePath)
		if err != nil {
			t.Fatal(err)
		}
		evShort, err := Evaluate(context.Background(), NewEngine(shortCat, NewLexical(opts), 0, 0), short, labelledFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range thresholds {
			m, s := evLong.At(th), evShort.At(th)
			// Keep what holds the short-fixture floors and abstains on 90 %
			// of the off-topic messages; rank by Hit@1 + MRR + abstain, the
			// three measures issue 13 sets targets for.
			if !shortFloorsHold(s) || m.Abstain < 0.9 {
				continue
			}
			o := opts.withDefaults()
			rows = append(rows, row{fmt.Sprintf("body=%.2f/b%.2f bodyidf=%.0f namebonus=%.1f unanchored=%.1f unknown=%.0f th=%.3f: tune hit1 %.3f mrr %.3f abstain %.3f | short hit1 %.3f mrr %.3f abstain %.3f",
				o.Body.Weight, o.Body.B, o.BodyIDF, o.NameBonus, o.Unanchored, o.Unknown, th, m.Hit1, m.MRR, m.Abstain, s.Hit1, s.MRR, s.Abstain),
				m.Hit1 + m.MRR + m.Abstain + 0.25*(s.Hit1+s.Abstain)})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].score > rows[j].score })
	var out []string
	for _, r := range rows[:min(30, len(rows))] {
		out = append(out, r.desc)
	}
	t.Log("\n" + strings.Join(out, "\n"))
}

// The realistic set: skills the size and shape of published ones (long
// bodies with code, API tables and several sections) and messages as
// users write them, split into a tune half (parameters were chosen on it)
// and a test half (held out; reported, never tuned on).
const (
	longRoot = "../../testdata/match-long/skills"
	longTune = "../../testdata/match-long/tune.jsonl"
	longTest = "../../testdata/match-long/test.jsonl"
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
	longHoldout11 = "../../testdata/match-long/holdout11.jsonl"
	longHoldout12 = "../../testdata/match-long/holdout12.jsonl"
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
	longHoldout17 = "../../testdata/match-long/holdout17.jsonl"
	longHoldout18 = "../../testdata/match-long/holdout18.jsonl"
	longHoldout19 = "../../testdata/match-long/holdout19.jsonl"
	// longHoldout20 to longHoldout23 were written blind, committed, and
	// scored once: they decided for candidate D, the code factor
	// (docs/matching.md).
	longHoldout20 = "../../testdata/match-long/holdout20.jsonl"
	longHoldout21 = "../../testdata/match-long/holdout21.jsonl"
	longHoldout22 = "../../testdata/match-long/holdout22.jsonl"
	longHoldout23 = "../../testdata/match-long/holdout23.jsonl"
	// longHoldout24 to longHoldout27 were written blind, committed, and
	// scored once: a measurement of the defaults and a check that the code
	// factor holds (docs/matching.md).
	longHoldout24 = "../../testdata/match-long/holdout24.jsonl"
	longHoldout25 = "../../testdata/match-long/holdout25.jsonl"
	longHoldout26 = "../../testdata/match-long/holdout26.jsonl"
	longHoldout27 = "../../testdata/match-long/holdout27.jsonl"
	// longHoldout28 to longHoldout31 were written blind, committed, and
	// scored once: a check of the stricter code factor (docs/matching.md).
	longHoldout28 = "../../testdata/match-long/holdout28.jsonl"
	longHoldout29 = "../../testdata/match-long/holdout29.jsonl"
	longHoldout30 = "../../testdata/match-long/holdout30.jsonl"
	longHoldout31 = "../../testdata/match-long/holdout31.jsonl"
	// longHoldout32 to longHoldout35 were written blind, committed, and
	// scored once: they decided for the everyday factor (docs/matching.md).
	longHoldout32 = "../../testdata/match-long/holdout32.jsonl"
	longHoldout33 = "../../testdata/match-long/holdout33.jsonl"
	longHoldout34 = "../../testdata/match-long/holdout34.jsonl"
	longHoldout35 = "../../testdata/match-long/holdout35.jsonl"
	// longHoldout36 to longHoldout39 were written blind, committed, and
	// scored once: they decided for the breadth factor (docs/matching.md).
	longHoldout36 = "../../testdata/match-long/holdout36.jsonl"
	longHoldout37 = "../../testdata/match-long/holdout37.jsonl"
	longHoldout38 = "../../testdata/match-long/holdout38.jsonl"
	longHoldout39 = "../../testdata/match-long/holdout39.jsonl"
	// longHoldout40 to longHoldout43 were written blind, committed, and
	// scored once: they decided for the requests lent by published skills
	// (docs/matching.md).
	longHoldout40 = "../../testdata/match-long/holdout40.jsonl"
	longHoldout41 = "../../testdata/match-long/holdout41.jsonl"
	longHoldout42 = "../../testdata/match-long/holdout42.jsonl"
	longHoldout43 = "../../testdata/match-long/holdout43.jsonl"
	// longHoldout44 to longHoldout47 were written blind, committed, and
	// scored once: they decided against the first fit of the factors'
	// strengths (docs/matching.md).
	longHoldout44 = "../../testdata/match-long/holdout44.jsonl"
	longHoldout45 = "../../testdata/match-long/holdout45.jsonl"
	longHoldout46 = "../../testdata/match-long/holdout46.jsonl"
	longHoldout47 = "../../testdata/match-long/holdout47.jsonl"
	// longHoldout48 to longHoldout51 were written blind, committed, and
	// scored once: they decided for the second fit (docs/matching.md).
	longHoldout48 = "../../testdata/match-long/holdout48.jsonl"
	longHoldout49 = "../../testdata/match-long/holdout49.jsonl"
	longHoldout50 = "../../testdata/match-long/holdout50.jsonl"
	longHoldout51 = "../../testdata/match-long/holdout51.jsonl"
)

// floorSet is a labelled set and the quality the defaults must keep on it.
type floorSet struct {
	path  string
	floor Metrics
}

// Floors on the realistic set, from measurement (docs/matching.md): the
// test fails if a change makes matching worse than this on any of the sets.
var longFloors = []floorSet{
	{longTune, Metrics{Hit1: 0.89, MRR: 0.90, Abstain: 1.00}},
	{longTest, Metrics{Hit1: 0.89, MRR: 0.91, Abstain: 0.97}},
	{longHoldout, Metrics{Hit1: 0.85, MRR: 0.85, Abstain: 0.97}},
	{longHoldout2, Metrics{Hit1: 0.94, MRR: 0.94, Abstain: 0.88}},
	{longHoldout3, Metrics{Hit1: 0.91, MRR: 0.92, Abstain: 0.91}},
	{longHoldout4, Metrics{Hit1: 0.91, MRR: 0.92, Abstain: 0.94}},
	{longHoldout5, Metrics{Hit1: 0.90, MRR: 0.91, Abstain: 0.91}},
	{longHoldout6, Metrics{Hit1: 0.93, MRR: 0.94, Abstain: 0.97}},
	{longHoldout7, Metrics{Hit1: 0.95, MRR: 0.96, Abstain: 0.91}},
	{longHoldout8, Metrics{Hit1: 0.96, MRR: 0.96, Abstain: 0.94}},
	{longHoldout9, Metrics{Hit1: 0.97, MRR: 0.97, Abstain: 1.00}},
	{longHoldout10, Metrics{Hit1: 0.95, MRR: 0.95, Abstain: 0.88}},
	{longHoldout11, Metrics{Hit1: 0.96, MRR: 0.96, Abstain: 0.88}},
	{longHoldout12, Metrics{Hit1: 0.91, MRR: 0.92, Abstain: 0.85}},
	{longHoldout13, Metrics{Hit1: 0.87, MRR: 0.89, Abstain: 0.94}},
	{longHoldout14, Metrics{Hit1: 0.88, MRR: 0.88, Abstain: 0.94}},
	{longHoldout15, Metrics{Hit1: 0.95, MRR: 0.95, Abstain: 0.94}},
	{longHoldout16, Metrics{Hit1: 0.94, MRR: 0.94, Abstain: 0.94}},
	{longHoldout17, Metrics{Hit1: 0.92, MRR: 0.93, Abstain: 0.94}},
	{longHoldout18, Metrics{Hit1: 0.92, MRR: 0.92, Abstain: 1.00}},
	{longHoldout19, Metrics{Hit1: 0.91, MRR: 0.92, Abstain: 0.94}},
	{longHoldout20, Metrics{Hit1: 0.94, MRR: 0.95, Abstain: 0.94}},
	{longHoldout21, Metrics{Hit1: 0.91, MRR: 0.93, Abstain: 1.00}},
	{longHoldout22, Metrics{Hit1: 0.90, MRR: 0.90, Abstain: 1.00}},
	{longHoldout23, Metrics{Hit1: 0.94, MRR: 0.96, Abstain: 0.97}},
	{longHoldout24, Metrics{Hit1: 0.88, MRR: 0.90, Abstain: 0.97}},
	{longHoldout25, Metrics{Hit1: 0.96, MRR: 0.97, Abstain: 0.91}},
	{longHoldout26, Metrics{Hit1: 0.94, MRR: 0.94, Abstain: 0.94}},
	{longHoldout27, Metrics{Hit1: 0.87, MRR: 0.88, Abstain: 0.97}},
	{longHoldout28, Metrics{Hit1: 0.95, MRR: 0.95, Abstain: 0.91}},
	{longHoldout29, Metrics{Hit1: 0.95, MRR: 0.96, Abstain: 0.97}},
	{longHoldout30, Metrics{Hit1: 0.90, MRR: 0.91, Abstain: 0.85}},
	{longHoldout31, Metrics{Hit1: 0.94, MRR: 0.95, Abstain: 0.91}},
	{longHoldout32, Metrics{Hit1: 0.92, MRR: 0.93, Abstain: 0.91}},
	{longHoldout33, Metrics{Hit1: 0.88, MRR: 0.90, Abstain: 0.91}},
	{longHoldout34, Metrics{Hit1: 0.87, MRR: 0.87, Abstain: 0.94}},
	{longHoldout35, Metrics{Hit1: 0.91, MRR: 0.92, Abstain: 0.91}},
	{longHoldout36, Metrics{Hit1: 0.90, MRR: 0.91, Abstain: 0.97}},
	{longHoldout37, Metrics{Hit1: 0.91, MRR: 0.92, Abstain: 0.97}},
	{longHoldout38, Metrics{Hit1: 0.92, MRR: 0.93, Abstain: 0.91}},
	{longHoldout39, Metrics{Hit1: 0.91, MRR: 0.92, Abstain: 0.85}},
	{longHoldout40, Metrics{Hit1: 0.97, MRR: 0.97, Abstain: 1.00}},
	{longHoldout41, Metrics{Hit1: 0.95, MRR: 0.95, Abstain: 0.97}},
	{longHoldout42, Metrics{Hit1: 0.95, MRR: 0.95, Abstain: 1.00}},
	{longHoldout43, Metrics{Hit1: 0.91, MRR: 0.91, Abstain: 0.82}},
	{longHoldout44, Metrics{Hit1: 0.95, MRR: 0.95, Abstain: 0.91}},
	{longHoldout45, Metrics{Hit1: 0.92, MRR: 0.93, Abstain: 0.97}},
	{longHoldout46, Metrics{Hit1: 0.92, MRR: 0.94, Abstain: 0.88}},
	{longHoldout47, Metrics{Hit1: 0.92, MRR: 0.93, Abstain: 0.97}},
	{longHoldout48, Metrics{Hit1: 0.92, MRR: 0.94, Abstain: 0.94}},
	{longHoldout49, Metrics{Hit1: 0.96, MRR: 0.97, Abstain: 0.91}},
	{longHoldout50, Metrics{Hit1: 0.97, MRR: 0.97, Abstain: 0.91}},
	{longHoldout51, Metrics{Hit1: 0.95, MRR: 0.96, Abstain: 1.00}},
}

func TestQualityLong(t *testing.T) {
	checkFloors(t, catalog.New([]string{longRoot}), longFloors)
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

// TestTuneCoverage is how the coverage factor and the threshold were
// chosen (tuneSearch) on the six realistic sets that had been read (tune,
// test and the first four holdouts); with SKILLHOST_TUNE_EXTRA, no setting
// may score lower on the other catalog than the matcher without the
// factor at its old threshold, 0.225. It runs only with
// SKILLHOST_TUNE=coverage; the fifth holdout is never looked at here.
func TestTuneCoverage(t *testing.T) {
	if os.Getenv("SKILLHOST_TUNE") != "coverage" {
		t.Skip("set SKILLHOST_TUNE=coverage to search the coverage factor")
	}
	var settings []tuneSetting
	for _, c := range []float64{-1, 0.75, 1, 1.25, 1.5, 2} {
		for _, ref := range []float64{500, 750, 1000, 1500, 2000} {
			if c == -1 && ref != 1000 {
				continue
			}
			settings = append(settings, tuneSetting{fmt.Sprintf("coverage=%.2f ref=%.0f", c, ref),
				LexicalOptions{Coverage: c, CoverageLen: ref, Semantic: -1}})
		}
	}
	sets := []string{longTune, longTest, longHoldout, longHoldout2, longHoldout3, longHoldout4}
	tuneSearch(t, sets, settings, 0.225)
}

// tuneSetting is one setting of a parameter search.
type tuneSetting struct {
	desc string
	opts LexicalOptions
}

// tuneSearch scores every setting at thresholds from 0.1 to 0.4 on the
// realistic sets, keeps those that hold the short-fixture floors, ranks
// them by Hit@1 + MRR + abstain summed over the sets, and logs the best
// 20. SKILLHOST_TUNE_EXTRA=DIR:A.jsonl,B.jsonl adds a constraint: the sum
// on another catalog (anthropics/skills with labelled messages, which
// cannot be committed) must not fall below that of the first setting at
// baseThreshold.
func tuneSearch(t *testing.T, sets []string, settings []tuneSetting, baseThreshold float64) {
	t.Helper()
	cat := catalog.New([]string{longRoot})
	var labels [][]Label
	for _, s := range sets {
		labels = append(labels, readLabelsFile(t, s))
	}
	var extraCat *catalog.Catalog
	var extra []Label
	if spec := os.Getenv("SKILLHOST_TUNE_EXTRA"); spec != "" {
		dir, file, ok := strings.Cut(spec, ":")
		if !ok {
			t.Fatalf("SKILLHOST_TUNE_EXTRA=%q: want DIR:LABELS.jsonl", spec)
		}
		extraCat = catalog.New([]string{dir})
		for _, f := range strings.Split(file, ",") {
			extra = append(extra, readLabelsFile(t, f)...)
		}
	}
	short := asLabels(loadLabelled(t))
	shortCat := catalog.New(corpusRoots)
	sum := func(m Metrics) float64 { return m.Hit1 + m.MRR + m.Abstain }
	type row struct {
		desc       string
		score, ext float64
	}
	var rows []row
	baseExtra := -1.0
	for i, st := range settings {
		var evs []*Evaluation
		for j, s := range sets {
			ev, err := Evaluate(context.Background(), NewEngine(cat, NewLexical(st.opts), 0, 0), labels[j], s)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		evShort, err := Evaluate(context.Background(), NewEngine(shortCat, NewLexical(st.opts), 0, 0), short, labelledFile)
		if err != nil {
			t.Fatal(err)
		}
		var evExtra *Evaluation
		if extraCat != nil {
			if evExtra, err = Evaluate(context.Background(), NewEngine(extraCat, NewLexical(st.opts), 0, 0), extra, "extra"); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				baseExtra = sum(evExtra.At(baseThreshold))
			}
		}
		for th := 0.1; th < 0.4; th += 0.0125 {
			if !shortFloorsHold(evShort.At(th)) {
				continue
			}
			r := row{desc: fmt.Sprintf("%s th=%.4f", st.desc, th)}
			for _, ev := range evs {
				m := ev.At(th)
				r.desc += fmt.Sprintf(" | %.3f %.3f %.3f", m.Hit1, m.MRR, m.Abstain)
				r.score += sum(m)
			}
			if evExtra != nil {
				r.ext = sum(evExtra.At(th))
				r.desc += fmt.Sprintf(" | extra %.3f", r.ext)
			}
			rows = append(rows, r)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].score > rows[j].score })
	var out []string
	for _, r := range rows {
		if extraCat != nil && r.ext < baseExtra {
			continue
		}
		if out = append(out, fmt.Sprintf("%s | sum %.3f", r.desc, r.score)); len(out) == 20 {
			break
		}
	}
	t.Logf("Hit@1 MRR abstain on %s (extra: at least %.3f)\n%s", strings.Join(sets, " | "), baseExtra, strings.Join(out, "\n"))
}

// TestTuneSemantic is how the semantic factor's strength, centre and the
// threshold were chosen (tuneSearch) on the seven realistic sets that had
// been read (tune, test and the first five holdouts); with
// SKILLHOST_TUNE_EXTRA, no setting may score lower on the other catalog
// than the matcher without the factor at 0.2. It runs only with
// SKILLHOST_TUNE=semantic; the sixth and seventh holdouts are never looked
// at here.
func TestTuneSemantic(t *testing.T) {
	if os.Getenv("SKILLHOST_TUNE") != "semantic" {
		t.Skip("set SKILLHOST_TUNE=semantic to search the semantic factor")
	}
	settings := []tuneSetting{{"semantic off", LexicalOptions{Semantic: -1}}}
	for _, g := range []float64{1, 2, 3, 4, 5, 6} {
		for _, c := range []float64{0.5, 0.55, 0.6, 0.65} {
			settings = append(settings, tuneSetting{fmt.Sprintf("semantic=%.0f centre=%.2f", g, c),
				LexicalOptions{Semantic: g, SemanticCentre: c}})
		}
	}
	sets := []string{longTune, longTest, longHoldout, longHoldout2, longHoldout3, longHoldout4, longHoldout5}
	tuneSearch(t, sets, settings, 0.2)
}

// TestTuneEveryday is how the everyday factor's strength, centre and the
// threshold were chosen (tuneSearch) on the 33 sets scored before it
// (tune, test, holdout to holdout31), with the built-in classifier and
// with classifiers learned at another L2 from the same messages. It runs
// only with SKILLHOST_TUNE=everyday; holdout32 and later are never looked
// at here. The breadth factor and the lent requests, adopted later, are
// off, as they were then.
func TestTuneEveryday(t *testing.T) {
	if os.Getenv("SKILLHOST_TUNE") != "everyday" {
		t.Skip("set SKILLHOST_TUNE=everyday to search the everyday factor")
	}
	settings := []tuneSetting{{"everyday off", LexicalOptions{Everyday: -1, Breadth: -1, Examples: -1}}}
	for _, g := range []float64{2, 4, 8} {
		for _, c := range []float64{0, 0.3, 0.5, 0.7} {
			settings = append(settings, tuneSetting{fmt.Sprintf("everyday=%.0f centre=%.1f", g, c),
				LexicalOptions{Everyday: g, EverydayCentre: zeroAsNegative(c), Breadth: -1, Examples: -1}})
		}
	}
	var examples []EverydayExample
	for _, l := range readTuneMessages(t) {
		examples = append(examples, EverydayExample{Message: l.Message, Everyday: l.Skill == nil})
	}
	for _, l2 := range []float64{0.001, 0.05} {
		m := TrainEveryday(examples, EverydayOptions{L2: l2})
		for _, gc := range [][2]float64{{4, 0.5}, {2, 0}} {
			settings = append(settings, tuneSetting{fmt.Sprintf("L2=%g everyday=%.0f centre=%.1f", l2, gc[0], gc[1]),
				LexicalOptions{Everyday: gc[0], EverydayCentre: zeroAsNegative(gc[1]), EverydayModel: m, Breadth: -1, Examples: -1}})
		}
	}
	tuneSearch(t, longSetsThrough(longHoldout31), settings, 0.2125) // the default threshold then
}

// TestTuneBreadth repeats the search that chose the breadth factor
// (docs/matching.md): its centre and strength, the threshold, and the
// whole of tools/wordvec/tune's messages for a skill as the background
// against the built-in quarter. It runs only with SKILLHOST_TUNE=breadth;
// holdout36 and later are never looked at here. The lent requests,
// adopted later, are off, as they were then.
func TestTuneBreadth(t *testing.T) {
	if os.Getenv("SKILLHOST_TUNE") != "breadth" {
		t.Skip("set SKILLHOST_TUNE=breadth to search the breadth factor")
	}
	var whole []string
	for _, l := range readTuneMessages(t) {
		if l.Skill != nil {
			whole = append(whole, l.Message)
		}
	}
	settings := []tuneSetting{{"breadth off", LexicalOptions{Breadth: -1, Examples: -1}}}
	for _, c := range []float64{0.04, 0.05, 0.06, 0.08, 0.1} {
		for _, g := range []float64{0.25, 0.5, 0.75, 1, 1.5} {
			settings = append(settings, tuneSetting{fmt.Sprintf("breadth=%.2f centre=%.2f", g, c),
				LexicalOptions{Breadth: g, BreadthCentre: c, Examples: -1}})
		}
	}
	settings = append(settings, tuneSetting{"breadth=0.75 centre=0.05, whole background",
		LexicalOptions{Breadth: 0.75, BreadthCentre: 0.05, Background: whole, Examples: -1}})
	tuneSearch(t, longSetsThrough(longHoldout35), settings, 0.2125) // the default threshold before it
}

// TestTuneExamples repeats the search that chose how many published
// skills lend each skill their requests (docs/matching.md), with the
// threshold, on the 41 sets scored before it. It runs only with
// SKILLHOST_TUNE=examples; holdout40 and later are never looked at here.
func TestTuneExamples(t *testing.T) {
	if os.Getenv("SKILLHOST_TUNE") != "examples" {
		t.Skip("set SKILLHOST_TUNE=examples to search the lent requests")
	}
	settings := []tuneSetting{{"none lent", LexicalOptions{Examples: -1}}}
	for _, k := range []int{1, 2, 3, 4, 5, 6, 8, 10} {
		settings = append(settings, tuneSetting{fmt.Sprintf("examples=%d", k), LexicalOptions{Examples: k}})
	}
	tuneSearch(t, longSetsThrough(longHoldout39), settings, 0.2) // the default threshold before it
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
// (longFloors' order), from the tune half up to and including last.
func longSetsThrough(last string) []string {
	var out []string
	for _, f := range longFloors {
		out = append(out, f.path)
		if f.path == last {
			return out
		}
	}
	panic("longSetsThrough: " + last + " is not in longFloors")
}

// zeroAsNegative is v as LexicalOptions reads it: zero there means the
// default, and a negative value zero.
func zeroAsNegative(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}

// anthropicsFloors hold the matcher to what it scored on the labelled sets
// of testdata/match-anthropics with the fitted strengths (docs/matching.md:
// they lowered Hit@1 by three messages of 204, and MRR on both sets).
var anthropicsFloors = []floorSet{
	{"../../testdata/match-anthropics/blind1.jsonl", Metrics{Hit1: 0.88, MRR: 0.89, Abstain: 0.94}},
	{"../../testdata/match-anthropics/blind2.jsonl", Metrics{Hit1: 0.85, MRR: 0.88, Abstain: 0.94}},
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
	checkFloors(t, cat, anthropicsFloors)
}
