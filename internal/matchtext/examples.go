package matchtext

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ExampleSimilarity is the least cosine between a skill's name and
// description and a published skill's for the published skill to lend it
// example requests: a skill that nothing published resembles gets none,
// rather than its nearest strangers' requests.
const ExampleSimilarity = 0.5

// Examples are requests that users wrote for published skills, grouped by
// skill, each group with the word vector of its skill's name and
// description (WordVectors.TextVector). The lexical matcher lends a
// skill the requests of the published skills most like it
// (match.LexicalOptions.Examples): skills are written in their authors' words,
// requests in their users', and the requests for a similar skill bring
// the users' words (a regular-expression skill's users ask to "pull out
// every email address").
type Examples struct {
	dim    int
	vecs   []float32 // unit vectors, dim per group
	groups [][]string
}

// Len is the number of groups.
func (e *Examples) Len() int { return len(e.groups) }

// Group returns the messages of group i, 0 ≤ i < Len().
func (e *Examples) Group(i int) []string { return e.groups[i] }

// Messages is the number of messages in all groups.
func (e *Examples) Messages() int {
	n := 0
	for _, g := range e.groups {
		n += len(g)
	}
	return n
}

// ExampleGroup is one published skill's requests and its vector.
type ExampleGroup struct {
	Vector   []float32
	Messages []string
}

//go:embed examples.txt
var builtinExamples string

// DefaultExamples returns the example requests built into the binary:
// the messages of tools/matchlab/tune written for published skills that
// are not background messages (DefaultBackground), grouped by skill, with
// vectors from the built-in word vectors. tools/matchlab examples writes
// the file.
var DefaultExamples = sync.OnceValues(func() (*Examples, error) {
	return ParseExamples(builtinExamples)
})

// WriteExamples writes groups in the form ParseExamples reads. Each group
// is a line "@ " and its vector, quantised to signed bytes and base64
// encoded, then its messages, one per line, white space runs made one
// space. A message that is empty or starts with "#" or "@" is left out,
// and so is a group with no message or with a zero vector.
func WriteExamples(groups []ExampleGroup) string {
	var b strings.Builder
	b.WriteString("# skillhost example requests: \"@ vector\", then the requests written for that published skill\n")
	for _, g := range groups {
		var msgs []string
		for _, m := range g.Messages {
			if m = oneLine(m); m != "" && m[0] != '#' && m[0] != '@' {
				msgs = append(msgs, m)
			}
		}
		q := make([]int8, len(g.Vector))
		quantize(g.Vector, q)
		if len(msgs) == 0 || rowInverse(q) == 0 {
			continue
		}
		raw := make([]byte, len(q))
		for k, x := range q {
			raw[k] = byte(x)
		}
		b.WriteString("@ " + base64.StdEncoding.EncodeToString(raw) + "\n")
		for _, m := range msgs {
			b.WriteString(m + "\n")
		}
	}
	return b.String()
}

// ParseExamples reads what WriteExamples wrote. Lines starting with "#"
// and blank lines are skipped, and a line starting with "@" is a vector. Every vector must have the same length, no
// group may be empty and no message may come before the first vector.
func ParseExamples(text string) (*Examples, error) {
	// The built-in file is read by every process that indexes a catalog,
	// so the vectors are sized once and decoded into one buffer.
	groups := strings.Count(text, "\n@ ") + 1
	e := &Examples{groups: make([][]string, 0, groups)}
	var raw []byte
	line := 0
	for l := range strings.Lines(text) {
		line++
		l = strings.TrimSpace(l)
		switch {
		case l == "" || l[0] == '#':
		case l[0] == '@':
			if n := len(e.groups); n > 0 && len(e.groups[n-1]) == 0 {
				return nil, fmt.Errorf("examples: line %d: the group before has no message", line)
			}
			enc := strings.TrimSpace(l[1:])
			raw = slices.Grow(raw[:0], base64.StdEncoding.DecodedLen(len(enc)))[:base64.StdEncoding.DecodedLen(len(enc))]
			n, err := base64.StdEncoding.Decode(raw, []byte(enc))
			if err != nil {
				return nil, fmt.Errorf("examples: line %d: vector: %w", line, err)
			}
			raw = raw[:n]
			if len(raw) == 0 {
				return nil, fmt.Errorf("examples: line %d: an empty vector", line)
			}
			if e.dim == 0 {
				e.dim = len(raw)
				e.vecs = make([]float32, 0, groups*e.dim)
			}
			q := make([]int8, len(raw))
			for k, x := range raw {
				q[k] = int8(x)
			}
			inv := rowInverse(q)
			if len(raw) != e.dim || inv == 0 {
				return nil, fmt.Errorf("examples: line %d: want a non-zero vector of %d bytes, have %d bytes", line, max(e.dim, 1), len(raw))
			}
			for _, x := range q {
				e.vecs = append(e.vecs, float32(x)*inv)
			}
			e.groups = append(e.groups, nil)
		case len(e.groups) == 0:
			return nil, fmt.Errorf("examples: line %d: a message before the first vector", line)
		default:
			e.groups[len(e.groups)-1] = append(e.groups[len(e.groups)-1], l)
		}
	}
	if n := len(e.groups); n > 0 && len(e.groups[n-1]) == 0 {
		return nil, fmt.Errorf("examples: line %d: the last group has no message", line)
	}
	return e, nil
}

// Nearest returns the k groups nearest v (a unit vector of the table's
// length) among those at a cosine of ExampleSimilarity or more, nearest
// first; ties keep the file's order.
func (e *Examples) Nearest(v []float32, k int) []int {
	if k <= 0 || len(v) != e.dim {
		return nil
	}
	type near struct {
		group int
		cos   float64
	}
	var best []near // at most k, nearest first
	for g := range e.groups {
		c := Dot(v, e.vecs[g*e.dim:(g+1)*e.dim])
		if c < ExampleSimilarity || len(best) == k && c <= best[k-1].cos {
			continue
		}
		i := sort.Search(len(best), func(i int) bool { return best[i].cos < c })
		if len(best) < k {
			best = append(best, near{})
		}
		copy(best[i+1:], best[i:])
		best[i] = near{g, c}
	}
	out := make([]int, len(best))
	for i, n := range best {
		out[i] = n.group
	}
	return out
}
