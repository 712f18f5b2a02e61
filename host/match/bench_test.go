package match

import (
	"context"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/internal/matchtext"
)

// generated builds n skills with a two-word name, a 25-word description
// and a bodyWords-word body drawn from a vocabulary with a skewed (Zipf)
// distribution, as real text is. Words are letters only: real prose
// rarely mixes letters and digits, which the tokenizer splits. They are
// made up, so no skill has a word vector and the semantic factor stays out.
func generated(n, vocabSize, bodyWords int) []Doc {
	vocab := make([]string, vocabSize)
	for i := range vocab {
		w := []byte{'q'}
		for v := i; ; v /= 26 {
			w = append(w, byte('a'+v%26))
			if v < 26 {
				break
			}
		}
		vocab[i] = string(w) + "x"
	}
	return generatedFrom(vocab, n, bodyWords)
}

// generatedFrom is generated with a given vocabulary, most common first.
func generatedFrom(vocab []string, n, bodyWords int) []Doc {
	r := rand.New(rand.NewSource(1))
	z := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	words := func(k int) string {
		var b strings.Builder
		for i := 0; i < k; i++ {
			b.WriteString(vocab[z.Uint64()])
			b.WriteByte(' ')
		}
		return b.String()
	}
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{Name: "skill-" + vocab[r.Intn(len(vocab))] + "-" + vocab[r.Intn(len(vocab))], Description: words(25), Body: words(bodyWords)}
	}
	return docs
}

// tableWords are the built-in word-vector table's words, most documents
// first: generated skills of real words, each with a word vector.
func tableWords() []string {
	w, err := matchtext.DefaultWordVectors()
	if err != nil {
		panic(err)
	}
	words := make([]string, w.Len())
	for i := range words {
		words[i], _ = w.Word(i)
	}
	return words
}

func BenchmarkLexicalIndex10k(b *testing.B) {
	docs := generated(10000, 5000, 80)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := NewLexical(LexicalOptions{}).Index(context.Background(), docs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLexicalIndex10kWords indexes 10,000 skills of the word-vector
// table's words (600-word bodies) with the semantic factor and without:
// what computing each skill's vector costs; and with the defaults, whose
// breadth factor adds a pass over the background messages, and without
// the lent requests.
func BenchmarkLexicalIndex10kWords(b *testing.B) {
	docs := generatedFrom(tableWords()[:20000], 10000, 600)
	for _, c := range []struct {
		name string
		o    LexicalOptions
	}{{"semantic", LexicalOptions{Breadth: -1}}, {"no-semantic", LexicalOptions{Semantic: -1, Breadth: -1}}, {"breadth", LexicalOptions{}}, {"no-examples", LexicalOptions{Examples: -1}}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := NewLexical(c.o).Index(context.Background(), docs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLexicalMatch10k scores a message against 10,000 skills with
// short bodies (80 words); BenchmarkLexicalMatch10kLong against 10,000
// with bodies of 600 words from a larger vocabulary, closer to published
// skills. Both report the median and 99th-percentile time of one Score.
func BenchmarkLexicalMatch10k(b *testing.B) {
	benchMatch(b, generated(10000, 5000, 80), LexicalOptions{})
}
func BenchmarkLexicalMatch10kLong(b *testing.B) {
	benchMatch(b, generated(10000, 20000, 600), LexicalOptions{})
}

// BenchmarkLexicalMatch10kWords is BenchmarkLexicalMatch10kLong with the
// words of the word-vector table, so every skill and message has a word
// vector, with the semantic factor and without, without the everyday
// factor, and without the lent requests: what each costs. Run it with
// -count to alternate them.
func BenchmarkLexicalMatch10kWords(b *testing.B) {
	docs := generatedFrom(tableWords()[:20000], 10000, 600)
	b.Run("semantic", func(b *testing.B) { benchMatch(b, docs, LexicalOptions{}) })
	b.Run("no-semantic", func(b *testing.B) { benchMatch(b, docs, LexicalOptions{Semantic: -1}) })
	b.Run("no-everyday", func(b *testing.B) { benchMatch(b, docs, LexicalOptions{Everyday: -1}) })
	b.Run("no-examples", func(b *testing.B) { benchMatch(b, docs, LexicalOptions{Examples: -1}) })
}

// BenchmarkEverydayProbability is the everyday classifier on one message
// of 25 words: its cost per match, whatever the catalog's size.
func BenchmarkEverydayProbability(b *testing.B) {
	m, err := matchtext.DefaultEveryday()
	if err != nil {
		b.Fatal(err)
	}
	const msg = "my dentist billed my insurance for a filling I never had, and the office says I have to call them before Friday. how do I dispute it politely?"
	b.ReportAllocs()
	for b.Loop() {
		m.Probability(msg)
	}
}

func benchMatch(b *testing.B, docs []Doc, o LexicalOptions) {
	l := NewLexical(o)
	if err := l.Index(context.Background(), docs); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewSource(2))
	messages := make([]string, 256)
	for i := range messages {
		d := docs[r.Intn(len(docs))]
		msg := strings.Fields(d.Description)[:6]
		messages[i] = "could you please help me with " + strings.Join(msg, " ") + " for the quarterly report today"
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := l.Score(context.Background(), messages[i%len(messages)]); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(times[len(times)*99/100])/1e6, "p99-ms")
}

// BenchmarkPromptBudget1k renders 1,000 skills into a budget that holds
// about a third of them, the case where descriptions are cut and the
// lowest-ranked skills dropped.
func BenchmarkPromptBudget1k(b *testing.B) {
	docs := generated(1000, 5000, 80)
	skills := make([]*skill.Skill, len(docs))
	for i, d := range docs {
		skills[i] = &skill.Skill{Name: d.Name, Description: d.Description, File: "/skills/" + d.Name + "/SKILL.md"}
	}
	full, err := Prompt(skills, FormatXML, 0)
	if err != nil {
		b.Fatal(err)
	}
	budget := len([]rune(full.Text)) / 3
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res, err := Prompt(skills, FormatXML, budget); err != nil || len(res.Dropped) == 0 {
			b.Fatalf("%v, dropped %d", err, len(res.Dropped))
		}
	}
}
