package match

import (
	"context"
	"fmt"
	"os"
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
	t.Logf("lexical matcher on %d skills (%s), %d messages (%d on-topic, %d off-topic), threshold %.2f:",
		len(cat.All()), matchCorpusNote, len(set), m.positives, m.negatives, DefaultLexicalThreshold)
	t.Logf("  Hit@1 %.3f  Hit@3 %.3f  MRR %.3f  off-topic false-match rate %.3f", m.hit1, m.hit3, m.mrr, m.falseHit)
	for _, miss := range m.misses {
		t.Logf("  miss: %s", miss)
	}
	if m.hit1 < floorHit1 || m.hit3 < floorHit3 || m.mrr < floorMRR || m.falseHit > ceilFalseMatch {
		t.Errorf("quality below the floors (Hit@1 %.2f, Hit@3 %.2f, MRR %.2f, false matches at most %.2f)", floorHit1, floorHit3, floorMRR, ceilFalseMatch)
	}
}

// TestTune prints the metrics over a grid of parameters; it runs only with
// SKILLHOST_TUNE=1 and is how the defaults were chosen.
func TestTune(t *testing.T) {
	if os.Getenv("SKILLHOST_TUNE") == "" {
		t.Skip("set SKILLHOST_TUNE=1 to search parameters")
	}
	set := loadLabelled(t)
	cat := catalog.New(corpusRoots)
	type row struct {
		desc  string
		score float64
	}
	var rows []row
	for _, b := range []float64{0.3, 0.5, 0.75} {
		for _, nw := range []float64{1, 2, 3} {
			for _, dw := range []float64{1, 1.5, 2} {
				for _, bw := range []float64{0.25, 0.5, 0.8} {
					for _, sat := range []float64{0.75, 1, 1.25, 1.5, 2} {
						for _, th := range []float64{0.3, 0.4, 0.5, 0.6} {
							opts := LexicalOptions{B: b, NameWeight: nw, DescriptionWeight: dw, BodyWeight: bw, Saturation: sat}
							m := evaluate(t, NewEngine(cat, NewLexical(opts), th, 0), set)
							score := m.hit1 + 0.5*m.mrr - 1.5*m.falseHit
							rows = append(rows, row{fmt.Sprintf("b=%.2f name=%.1f desc=%.1f body=%.2f sat=%.1f th=%.2f: hit1 %.3f hit3 %.3f mrr %.3f false %.3f",
								b, nw, dw, bw, sat, th, m.hit1, m.hit3, m.mrr, m.falseHit), score})
						}
					}
				}
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].score > rows[j].score })
	var out []string
	for _, r := range rows[:min(25, len(rows))] {
		out = append(out, r.desc)
	}
	t.Log("\n" + strings.Join(out, "\n"))
}
