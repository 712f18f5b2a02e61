package match

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/catalog"
)

// corpusRoots are the short fixtures' catalog: the skills the messages
// of testdata/match/labelled.jsonl were written for.
var corpusRoots = []string{"../../examples/skills", "../../testdata/match/skills", "../../testdata/skills"}

const labelledFile = "../../testdata/match/labelled.jsonl"

// TestQuality holds the default matcher to its floors on the short
// fixtures.
func TestQuality(t *testing.T) {
	if n := len(readLabelsFile(t, labelledFile)); n < 40 {
		t.Fatalf("the labelled set has %d messages; at least 40 are required", n)
	}
	checkFloors(t, catalog.New(corpusRoots), readFloors(t, "match/"))
}

// The realistic set: skills the size and shape of published ones (long
// bodies with code, API tables and several sections) and messages as
// users write them, split into a tune half (parameters were chosen on it)
// and a test half (held out; reported, never tuned on).
const longRoot = "../../testdata/match-long/skills"

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
