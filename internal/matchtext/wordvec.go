package matchtext

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"sync"
)

// WordVectors map stemmed words to unit vectors learned from which words
// occur near which in a corpus of skills, so that words used for the same
// things (docker and container, refund and invoice) point the same way.
// They are what the lexical matcher's semantic factor compares a message
// with a skill by. A table is built by tools/matchlab (NewWordVectors) and read by
// ReadWordVectors; the matcher uses the one built into the binary
// (DefaultWordVectors) unless match.LexicalOptions.Vectors gives another.
type WordVectors struct {
	dim   int
	docs  int              // documents in the corpus the table was built from
	index map[string]int32 // word to row
	words []string
	df    []uint32 // documents of the corpus that have the word
	// Each row is stored as dim signed bytes, its direction: bytes keep
	// the table to a few megabytes in the binary and in memory, and move a
	// cosine little.
	q []int8
	// inv (one over a row's length, which makes it a unit vector) and
	// weight (a row's idf in the corpus times inv: what it adds to a
	// centroid per byte) follow from the rows and counts (derive).
	inv, weight []float32
}

// Dim is the length of the vectors.
func (w *WordVectors) Dim() int { return w.dim }

// Len is the number of words in the table.
func (w *WordVectors) Len() int { return len(w.words) }

// Vector returns the unit vector of a stemmed word (see Tokens), or nil if
// the table does not have it.
func (w *WordVectors) Vector(stem string) []float32 {
	i, ok := w.index[stem]
	if !ok {
		return nil
	}
	v := make([]float32, w.dim)
	for k, x := range w.row(i) {
		v[k] = float32(x) * w.inv[i]
	}
	return v
}

func (w *WordVectors) row(i int32) []int8 { return w.q[int(i)*w.dim : int(i+1)*w.dim] }

// Similarity is the cosine of the centroids of a and b (see Tokens for how
// texts become words), in [-1, 1]; 0 when either has no word in the table.
func (w *WordVectors) Similarity(a, b string) float64 {
	ca, cb := make([]float32, w.dim), make([]float32, w.dim)
	if !w.Centroid(Analyze(a, nil, false), ca) || !w.Centroid(Analyze(b, nil, false), cb) {
		return 0
	}
	return Dot(ca, cb)
}

// TextVector is the centroid of text's words (see centroid), and false
// when no word of text is in the table.
func (w *WordVectors) TextVector(text string) ([]float32, bool) {
	v := make([]float32, w.dim)
	return v, w.Centroid(Analyze(text, nil, false), v)
}

// Centroid writes into dst the unit-length sum of the vectors of the
// words of terms that centroidRows yields, each weighted by its idf in the
// corpus (a word most skills use says little about what a text is about).
// It reports false, leaving dst zero, when no word is in the table.
func (w *WordVectors) Centroid(terms []Term, dst []float32) bool {
	clear(dst)
	for i := range w.centroidRows(terms) {
		f := w.weight[i]
		for k, x := range w.row(i) {
			dst[k] += f * float32(x)
		}
	}
	return normalize(dst)
}

// centroidRows yields the rows of the distinct whole words among terms
// that the table has, in order. Lesser parts of compound words are left
// out: the whole word has its own vector. A word at a level or version
// (SEV2, python3) is the word. A row of zeros, which has no direction, is
// left out too.
func (w *WordVectors) centroidRows(terms []Term) iter.Seq[int32] {
	return func(yield func(int32) bool) {
		var leveled map[string]bool // rare: built only when a text has one
		for _, t := range terms {
			if t.Whole != "" && t.Weight == 1 {
				if leveled == nil {
					leveled = map[string]bool{}
				}
				leveled[t.Whole] = true
			}
		}
		seen := make(map[int32]struct{}, len(terms))
		for _, t := range terms {
			if t.Weight != 1 || leveled[t.Text] {
				continue
			}
			i, ok := w.index[t.Text]
			if !ok || w.inv[i] == 0 {
				continue
			}
			if _, dup := seen[i]; dup {
				continue
			}
			seen[i] = struct{}{}
			if !yield(i) {
				return
			}
		}
	}
}

// normalize scales v to unit length and reports whether it was non-zero.
func normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// Dot is the dot product of two vectors of the same length, in four
// running sums: scoring a large catalog takes one per skill.
func Dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}

// The file format: a header line "skillhost-wordvec 1 WORDS DIM DOCS\n",
// then for each word its length and bytes, its document frequency (both
// unsigned varints) and DIM signed bytes, its direction.
const wordVecMagic = "skillhost-wordvec"

// quantize turns a row into bytes, its largest component ±127.
func quantize(v []float32, dst []int8) {
	var peak float64
	for _, x := range v {
		peak = max(peak, math.Abs(float64(x)))
	}
	for k, x := range v {
		if peak > 0 {
			dst[k] = int8(math.Round(float64(x) * 127 / peak))
		}
	}
}

// rowInverse is one over the length of a row of bytes; 0 for a zero row.
func rowInverse(q []int8) float32 {
	var s float64
	for _, x := range q {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return 0
	}
	return float32(1 / math.Sqrt(s))
}

// WriteTo writes the table in the format ReadWordVectors reads.
func (w *WordVectors) WriteTo(out io.Writer) (int64, error) {
	bw := bufio.NewWriter(out)
	n, _ := fmt.Fprintf(bw, "%s 1 %d %d %d\n", wordVecMagic, len(w.words), w.dim, w.docs)
	written := int64(n)
	var buf [binary.MaxVarintLen64]byte
	for i, word := range w.words {
		k := binary.PutUvarint(buf[:], uint64(len(word)))
		bw.Write(buf[:k])
		bw.WriteString(word)
		written += int64(k + len(word))
		k = binary.PutUvarint(buf[:], uint64(w.df[i]))
		bw.Write(buf[:k])
		for _, x := range w.row(int32(i)) {
			bw.WriteByte(byte(x))
		}
		written += int64(k + w.dim)
	}
	return written, bw.Flush()
}

// ReadWordVectors reads a table written by WriteTo.
func ReadWordVectors(r io.Reader) (*WordVectors, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("word vectors: %w", err)
	}
	return parseWordVectors(data)
}

func parseWordVectors(data []byte) (*WordVectors, error) {
	end := bytes.IndexByte(data, '\n')
	if end < 0 {
		return nil, errors.New("word vectors: no header line")
	}
	header := string(data[:end])
	var magic string
	var version, words, dim, docs int
	if _, err := fmt.Sscanf(header, "%s %d %d %d %d", &magic, &version, &words, &dim, &docs); err != nil || magic != wordVecMagic {
		return nil, fmt.Errorf("word vectors: not a skillhost word-vector table (header %q)", truncate(header, 40))
	}
	if version != 1 {
		return nil, fmt.Errorf("word vectors: format version %d, want 1", version)
	}
	if words < 0 || dim <= 0 || dim > 4096 || docs <= 0 || docs > math.MaxUint32 || words > 10_000_000 {
		return nil, fmt.Errorf("word vectors: implausible size: %d words of %d dimensions from %d documents", words, dim, docs)
	}
	rest := data[end+1:]
	if words > len(rest)/(dim+2) { // each word takes at least dim+2 bytes
		return nil, fmt.Errorf("word vectors: %d words of %d dimensions do not fit in %d bytes", words, dim, len(rest))
	}
	w := &WordVectors{dim: dim, docs: docs, index: make(map[string]int32, words),
		words: make([]string, 0, words), df: make([]uint32, 0, words), q: make([]int8, words*dim)}
	for i := range words {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n == 0 || n > 256 || uint64(len(rest)-k) < n {
			return nil, fmt.Errorf("word vectors: word %d: bad length", i)
		}
		word := string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
		df, k := binary.Uvarint(rest)
		if k <= 0 || df == 0 || df > uint64(docs) {
			return nil, fmt.Errorf("word vectors: word %q: bad document frequency", word)
		}
		rest = rest[k:]
		if len(rest) < dim {
			return nil, fmt.Errorf("word vectors: word %q: %w", word, io.ErrUnexpectedEOF)
		}
		if _, dup := w.index[word]; dup {
			return nil, fmt.Errorf("word vectors: word %q twice", word)
		}
		row := w.q[i*dim : (i+1)*dim]
		for j, b := range rest[:dim] {
			row[j] = int8(b)
		}
		rest = rest[dim:]
		w.index[word] = int32(i)
		w.words = append(w.words, word)
		w.df = append(w.df, uint32(df))
	}
	if len(rest) > 0 {
		return nil, errors.New("word vectors: data after the last word")
	}
	w.derive()
	return w, nil
}

// derive computes what a table keeps beside its rows and counts: each
// row's inverse length and its weight in a centroid.
func (w *WordVectors) derive() {
	w.inv = make([]float32, len(w.words))
	w.weight = make([]float32, len(w.words))
	for i, df := range w.df {
		w.inv[i] = rowInverse(w.row(int32(i)))
		w.weight[i] = float32(math.Log(float64(w.docs)/float64(df))) * w.inv[i]
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

//go:embed wordvec.bin
var builtinWordVectors []byte

// DefaultWordVectors returns the table built into the binary: 30,000
// stemmed words in 100 dimensions, from the SKILL.md files of a public
// registry of skills (tools/matchlab/NOTEBOOK.md, "The word vectors", says
// which, and how it was built with tools/matchlab). It is read once, on first use; an error means the
// binary was built from a broken source tree.
var DefaultWordVectors = sync.OnceValues(func() (*WordVectors, error) {
	w, err := parseWordVectors(builtinWordVectors)
	if err != nil {
		return nil, fmt.Errorf("built-in %w", err)
	}
	return w, nil
})

// NewWordVectors makes a table of words, each a stem as Tokens gives it,
// with the number of the corpus's docs it occurs in and its vector. A
// vector is stored as its direction, quantised to signed bytes as the
// file format keeps it; a zero vector has no direction and the word is
// then never part of a centroid. It fails on a word given twice, an empty
// word, a count outside 1..docs or vectors of unequal length.
func NewWordVectors(docs int, words []string, df []int, vectors [][]float32) (*WordVectors, error) {
	if len(words) != len(df) || len(words) != len(vectors) {
		return nil, fmt.Errorf("word vectors: %d words, %d counts and %d vectors", len(words), len(df), len(vectors))
	}
	if docs <= 0 || len(words) == 0 {
		return nil, errors.New("word vectors: no documents or no words")
	}
	dim := len(vectors[0])
	if dim == 0 || dim > 4096 {
		return nil, fmt.Errorf("word vectors: %d dimensions", dim)
	}
	w := &WordVectors{dim: dim, docs: docs, index: make(map[string]int32, len(words)), words: words,
		df: make([]uint32, len(words)), q: make([]int8, len(words)*dim)}
	for i, word := range words {
		if _, dup := w.index[word]; dup || word == "" || len(word) > 256 {
			return nil, fmt.Errorf("word vectors: word %q empty, too long or twice", truncate(word, 40))
		}
		if df[i] <= 0 || df[i] > docs {
			return nil, fmt.Errorf("word vectors: word %q: %d documents of %d", word, df[i], docs)
		}
		if len(vectors[i]) != dim {
			return nil, fmt.Errorf("word vectors: word %q: %d dimensions, want %d", word, len(vectors[i]), dim)
		}
		w.index[word] = int32(i)
		w.df[i] = uint32(df[i])
		quantize(vectors[i], w.row(int32(i)))
	}
	w.derive()
	return w, nil
}

// Docs is the number of documents of the corpus the table was built from.
func (w *WordVectors) Docs() int { return w.docs }

// Word returns the i-th word of the table and the number of documents it
// occurs in.
func (w *WordVectors) Word(i int) (string, int) { return w.words[i], int(w.df[i]) }

// Rows returns the rows of the table that a centroid of texts sums, as
// the semantic factor forms it: the distinct whole words the table has,
// in order of first use (see centroidRows).
func (w *WordVectors) Rows(texts ...string) []int {
	var terms []Term
	for _, t := range texts {
		terms = append(terms, Analyze(t, nil, false)...)
	}
	var out []int
	for i := range w.centroidRows(terms) {
		out = append(out, int(i))
	}
	return out
}
