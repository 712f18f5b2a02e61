package matchtext

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExamplesRoundTrip(t *testing.T) {
	groups := []ExampleGroup{
		{Vector: []float32{1, 0, 0}, Messages: []string{"pull out  every\temail address", "", "# not a comment here", "@ nor a vector"}},
		{Vector: []float32{0, 0, 0}, Messages: []string{"a zero vector lends nothing"}},
		{Vector: []float32{0, 3, 4}, Messages: []string{"check ticket ids in commit messages", "find dates in a log"}},
		{Vector: []float32{0, 1, 0}, Messages: []string{"   "}},
	}
	e, err := ParseExamples(WriteExamples(groups))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"pull out every email address"}, {"check ticket ids in commit messages", "find dates in a log"}}
	if e.Len() != 2 || !slices.EqualFunc(e.groups, want, slices.Equal) {
		t.Fatalf("groups %q, want %q", e.groups, want)
	}
	// Vectors come back as unit vectors, within a byte's rounding.
	for k, x := range []float32{0, 0.6, 0.8} {
		if got := e.vecs[e.dim+k]; math.Abs(float64(got-x)) > 0.01 {
			t.Errorf("second vector [%d] = %.3f, want %.3f", k, got, x)
		}
	}
}

func TestParseExamplesErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"a message\n", "line 1: a message before the first vector"},
		{"@ AQID\n@ AQID\nm\n", "line 2: the group before has no message"},
		{"@ AQID\nm\n@ AQID\n", "the last group has no message"},
		{"@ !!\nm\n", "line 1: vector"},
		{"@ AQID\nm\n@ AQIDBA==\nm\n", "line 3: want a non-zero vector of 3 bytes, have 4 bytes"},
		{"@ AAAA\nm\n", "line 1: want a non-zero vector"},
		{"@\nm\n", "line 1: an empty vector"},
		{"@AQID\nm\n@ \n", "line 3: an empty vector"},
	} {
		_, err := ParseExamples(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseExamples(%q) = %v, want an error containing %q", c.text, err, c.want)
		}
	}
	if e, err := ParseExamples("# only a comment\n\n"); err != nil || e.Len() != 0 {
		t.Errorf("comment only: %v, %d groups", err, e.Len())
	}
}

func (e *Examples) lend(v []float32, k int) []string {
	var out []string
	for _, g := range e.Nearest(v, k) {
		out = append(out, e.groups[g]...)
	}
	return out
}

func TestExamplesLend(t *testing.T) {
	e, err := ParseExamples(WriteExamples([]ExampleGroup{
		{Vector: []float32{1, 0}, Messages: []string{"east"}},
		{Vector: []float32{0.8, 0.6}, Messages: []string{"east by north", "also east by north"}},
		{Vector: []float32{0.6, 0.8}, Messages: []string{"north by east"}},
		{Vector: []float32{0, 1}, Messages: []string{"north"}},
		{Vector: []float32{-1, 0}, Messages: []string{"west"}},
		{Vector: []float32{0.8, 0.6}, Messages: []string{"east by north again"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	east := []float32{1, 0}
	for _, c := range []struct {
		k    int
		want []string
	}{
		{0, nil},
		{1, []string{"east"}},
		{2, []string{"east", "east by north", "also east by north"}},
		// a tie keeps the file's order
		{3, []string{"east", "east by north", "also east by north", "east by north again"}},
		// north (cosine 0) and west (-1) are under the least cosine, 0.5
		{5, []string{"east", "east by north", "also east by north", "east by north again", "north by east"}},
	} {
		if got := e.lend(east, c.k); !slices.Equal(got, c.want) {
			t.Errorf("lend(east, %d) = %q, want %q", c.k, got, c.want)
		}
	}
	if got := e.lend([]float32{0.6, 0.8}, 2); !slices.Equal(got, []string{"north by east", "east by north", "also east by north"}) {
		t.Errorf("nearest first: got %q", got)
	}
	if got := e.lend([]float32{1, 0, 0}, 3); got != nil {
		t.Errorf("a vector of another length is lent %q", got)
	}
}

func TestDefaultExamples(t *testing.T) {
	e, err := DefaultExamples()
	if err != nil {
		t.Fatal(err)
	}
	w, err := DefaultWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	if e.dim != w.Dim() {
		t.Fatalf("example vectors of %d dimensions, word vectors of %d", e.dim, w.Dim())
	}
	var want [][]string
	group := map[string]int{}
	for _, l := range readTuneMessages(t) {
		m := oneLine(l.Message)
		if l.Skill == nil || InBackground(m) || strings.HasPrefix(m, "@") || strings.HasPrefix(m, "#") {
			continue
		}
		g, ok := group[*l.Skill]
		if !ok {
			g = len(want)
			group[*l.Skill] = g
			want = append(want, nil)
		}
		want[g] = append(want[g], m)
	}
	if !slices.EqualFunc(e.groups, want, slices.Equal) {
		t.Fatalf("the built-in examples are %d groups, the tune files give %d: rebuild internal/matchtext/examples.txt (tools/matchlab/tune/README.md)", e.Len(), len(want))
	}
	background := map[string]bool{}
	for _, m := range DefaultBackground() {
		background[m] = true
	}
	for _, g := range e.groups {
		for _, m := range g {
			if background[m] {
				t.Fatalf("%q is lent and a background message", m)
			}
		}
	}
}

func TestJoinScans(t *testing.T) {
	e, err := DefaultExamples()
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"the build fails", "don't retry", "12", "'s", "", "TypeScript and SEV2 on node18",
		"work_mem tuning", "PDFs, APIs", "caf\u00e9 na\u00efve r\u00e9sum\u00e9", "export", "42 1234",
	}
	for g := 0; g < e.Len(); g += 97 {
		texts = append(texts, strings.Join(e.groups[g], "\n"))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + r.IntN(5)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = texts[r.IntN(len(texts))]
		}
		for _, pairs := range []bool{true, false} {
			scans := make([]Scanned, n)
			for i, p := range parts {
				scans[i] = Scan(p, nil, pairs)
			}
			want := Analyze(strings.Join(parts, "\n"), nil, pairs)
			if got := JoinScans(scans, pairs); !slices.Equal(got, want) {
				t.Fatalf("trial %d, pairs %v, %q:\njoined %v\nwhole  %v", trial, pairs, parts, got, want)
			}
		}
	}
}

// tuneMessage is a labelled message of tools/matchlab/tune: Skill is nil
// for a message written for no skill.
type tuneMessage struct {
	Message string  `json:"message"`
	Skill   *string `json:"skill"`
}

// readTuneMessages reads every message of tools/matchlab/tune, in file
// order.
func readTuneMessages(t *testing.T) []tuneMessage {
	t.Helper()
	files, err := filepath.Glob("../../tools/matchlab/tune/batch*.jsonl")
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
