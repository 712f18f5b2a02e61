package matchtext

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Everyday tells everyday questions ("my dentist billed me for a filling I
// never had") from requests a skill might serve. It is a logistic
// regression over the distinct stemmed words of a message, stop words
// included: "my", "son" and "insurance" say as much about who is asking as
// "dentist" does. It is learned from messages written for published
// skills and for none (tools/matchlab everyday), so it knows nothing of the
// catalog it is used with.
type Everyday struct {
	bias    float64
	weights map[string]float64
}

// NewEveryday returns the classifier with the given bias and the weights
// of the words EverydayWords gives: what the offline trainer
// (tools/matchlab everyday) learns and WriteTo writes.
func NewEveryday(bias float64, weights map[string]float64) *Everyday {
	return &Everyday{bias: bias, weights: maps.Clone(weights)}
}

// Probability is the probability that message is an everyday question,
// in [0, 1] (it rounds to 1 for a long run of everyday words). It is a
// score more than a calibrated probability: see match.LexicalOptions.Everyday.
func (m *Everyday) Probability(message string) float64 {
	return m.ProbabilityWith(message, nil)
}

// ProbabilityWith is Probability with stems cached in st, which may be nil.
func (m *Everyday) ProbabilityWith(message string, st *Memo) float64 {
	return m.logistic(EverydayWords(message, st))
}

func (m *Everyday) logistic(words []string) float64 {
	z := m.bias
	for _, w := range words {
		z += m.weights[w]
	}
	return 1 / (1 + math.Exp(-z))
}

// EverydayWords are the distinct Porter2 stems of a message's words: runs
// of letters and apostrophes, lower-cased, apostrophes trimmed, of two
// bytes or more. Stop words stay; numbers and symbols go. A typographic
// apostrophe (’) is read as a straight one, so "don’t" is "don't". m
// caches stems and may be nil.
func EverydayWords(message string, m *Memo) []string {
	var out []string
	seen := map[string]bool{}
	message = strings.ReplaceAll(strings.ToLower(message), "’", "'")
	for w := range strings.FieldsFuncSeq(message, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		w = strings.Trim(w, "'")
		if len(w) < 2 {
			continue
		}
		if s := m.stem(w); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// everydayBias names the bias in the table's text form; it cannot be a
// word, which has only letters and apostrophes.
const everydayBias = "(bias)"

// WriteTo writes the classifier as text: a comment line, the bias, then
// one word and its weight per line, tab-separated, in word order.
func (m *Everyday) WriteTo(out io.Writer) (int64, error) {
	var b strings.Builder
	b.WriteString("# skillhost everyday-question classifier: word<TAB>weight\n")
	fmt.Fprintf(&b, "%s\t%s\n", everydayBias, strconv.FormatFloat(m.bias, 'g', 6, 64))
	for _, w := range slices.Sorted(maps.Keys(m.weights)) {
		fmt.Fprintf(&b, "%s\t%s\n", w, strconv.FormatFloat(m.weights[w], 'g', 6, 64))
	}
	n, err := io.WriteString(out, b.String())
	return int64(n), err
}

// ReadEveryday reads a classifier written by WriteTo. Lines starting with
// '#' are comments; every other line must be a word, a tab and a number,
// with one (bias) line and each word once.
func ReadEveryday(r io.Reader) (*Everyday, error) {
	m := &Everyday{weights: map[string]float64{}}
	sc := bufio.NewScanner(r)
	line, sawBias := 0, false
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		word, num, ok := strings.Cut(text, "\t")
		v, err := strconv.ParseFloat(num, 64)
		if !ok || word == "" || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("everyday classifier line %d: want WORD<TAB>NUMBER, got %q", line, truncate(text, 60))
		}
		if word == everydayBias {
			if sawBias {
				return nil, fmt.Errorf("everyday classifier line %d: a second %s line", line, everydayBias)
			}
			m.bias, sawBias = v, true
			continue
		}
		if _, dup := m.weights[word]; dup {
			return nil, fmt.Errorf("everyday classifier line %d: %q a second time", line, truncate(word, 60))
		}
		m.weights[word] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("everyday classifier line %d: %w", line+1, err)
	}
	if !sawBias {
		return nil, fmt.Errorf("everyday classifier: no %s line", everydayBias)
	}
	return m, nil
}

//go:embed everyday.tsv
var builtinEveryday string

// DefaultEveryday returns the classifier built into the binary, learned
// from the labelled messages in tools/matchlab/tune (its README has the
// command). It is read once, on first use; an error means the binary
// was built from a broken source tree.
var DefaultEveryday = sync.OnceValues(func() (*Everyday, error) {
	m, err := ReadEveryday(strings.NewReader(builtinEveryday))
	if err != nil {
		return nil, fmt.Errorf("built-in %w", err)
	}
	return m, nil
})
