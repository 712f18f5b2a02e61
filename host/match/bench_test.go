package match

import (
	"context"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/skill"
)

// generated builds n skills with a two-word name, a 25-word description
// and a bodyWords-word body drawn from a vocabulary with a skewed (Zipf)
// distribution, as real text is. Words are letters only: real prose
// rarely mixes letters and digits, which the tokenizer splits.
func generated(n, vocabSize, bodyWords int) []Doc {
	r := rand.New(rand.NewSource(1))
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

func BenchmarkLexicalIndex10k(b *testing.B) {
	docs := generated(10000, 5000, 80)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := NewLexical(LexicalOptions{}).Index(context.Background(), docs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLexicalMatch10k scores a message against 10,000 skills with
// short bodies (80 words); BenchmarkLexicalMatch10kLong against 10,000
// with bodies of 600 words from a larger vocabulary, closer to published
// skills. Both report the median and 99th-percentile time of one Score.
func BenchmarkLexicalMatch10k(b *testing.B)     { benchMatch(b, generated(10000, 5000, 80)) }
func BenchmarkLexicalMatch10kLong(b *testing.B) { benchMatch(b, generated(10000, 20000, 600)) }

func benchMatch(b *testing.B, docs []Doc) {
	l := NewLexical(LexicalOptions{})
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
