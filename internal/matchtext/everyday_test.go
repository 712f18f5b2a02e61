package matchtext

import (
	"slices"
	"strings"
	"testing"
)

func TestEverydayWords(t *testing.T) {
	for _, c := range []struct {
		message string
		want    []string
	}{
		{"My dentist billed me twice", []string{"my", "dentist", "bill", "me", "twice"}},
		{"'quoted' words, don't split; the THE the", []string{"quot", "word", "don't", "split", "the"}},
		{"x 42 a1b2 — ok", []string{"ok"}},
		{"Don’t know why I’m here", []string{"don't", "know", "why", "i'm", "here"}},
		{"", nil},
	} {
		if got := EverydayWords(c.message, nil); !slices.Equal(got, c.want) {
			t.Errorf("everydayWords(%q) = %q, want %q", c.message, got, c.want)
		}
	}
}

func TestReadEverydayErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"(bias)\t0.5\nword 1\n", "line 2: want WORD<TAB>NUMBER"},
		{"# c\n(bias)\tnope\n", "line 2"},
		{"(bias)\t1\nword\tNaN\n", "line 2"},
		{"\tword\t1\n", "line 1"},
		{"word\t1\n", "no (bias) line"},
		{"(bias)\t1\n(bias)\t2\n", "line 2: a second (bias) line"},
		{"(bias)\t1\nword\t1\nword\t2\n", `line 3: "word" a second time`},
	} {
		_, err := ReadEveryday(strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadEveryday(%q) = %v, want an error with %q", c.text, err, c.want)
		}
	}
}

func FuzzEverydayProbability(f *testing.F) {
	for _, s := range []string{"my dentist billed me twice", "Don’t '' ’’ x", "İstanbul ÇAĞ 2 \x00\xff", strings.Repeat("ab ", 50)} {
		f.Add(s)
	}
	m, err := DefaultEveryday()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if p := m.Probability(in); !(p >= 0 && p <= 1) {
			t.Fatalf("probability %v for %q", p, in)
		}
		seen := map[string]bool{}
		for _, w := range EverydayWords(in, nil) {
			if w == "" || seen[w] || strings.ContainsAny(w, " \t\n") {
				t.Fatalf("word %q (seen %v) from %q", w, seen[w], in)
			}
			seen[w] = true
		}
	})
}

func TestDefaultEveryday(t *testing.T) {
	m, err := DefaultEveryday()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.weights) < 1000 {
		t.Fatalf("the built-in classifier has %d words", len(m.weights))
	}
	// Messages written here, not taken from its training messages.
	for _, c := range []struct {
		message  string
		everyday bool
	}{
		{"my dentist charged my insurance for a crown I never got, how do I complain", true},
		{"what should I pack for a week of hiking in Scotland in October", true},
		{"the Dockerfile copies node_modules and the image is 2 GB", false},
		{"write a regular expression that matches ISO dates", false},
	} {
		if p := m.Probability(c.message); (p > 0.5) != c.everyday {
			t.Errorf("%q: probability %.3f, want everyday %v", c.message, p, c.everyday)
		}
	}
}
