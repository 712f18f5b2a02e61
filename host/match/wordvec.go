package match

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// WordVectors map stemmed words to unit vectors learned from which words
// occur near which in a corpus of skills, so that words used for the same
// things (docker and container, refund and invoice) point the same way.
// They are what the lexical matcher's semantic factor compares a message
// with a skill by. A table is built by BuildWordVectors and read by
// ReadWordVectors; the matcher uses the one built into the binary
// (DefaultWordVectors) unless LexicalOptions.Vectors gives another.
type WordVectors struct {
	dim   int
	docs  int              // documents in the corpus the table was built from
	index map[string]int32 // word to row
	words []string
	df    []uint32  // documents of the corpus that have the word
	vecs  []float32 // len(words)*dim, each row of unit length
}

// Dim is the length of the vectors.
func (w *WordVectors) Dim() int { return w.dim }

// Len is the number of words in the table.
func (w *WordVectors) Len() int { return len(w.words) }

// Vector returns the unit vector of a stemmed word (see Tokens), or nil if
// the table does not have it. The slice is the table's: do not change it.
func (w *WordVectors) Vector(stem string) []float32 {
	i, ok := w.index[stem]
	if !ok {
		return nil
	}
	return w.vecs[int(i)*w.dim : int(i+1)*w.dim]
}

// Similarity is the cosine of the centroids of a and b (see Tokens for how
// texts become words), in [-1, 1]; 0 when either has no word in the table.
func (w *WordVectors) Similarity(a, b string) float64 {
	ca, cb := make([]float32, w.dim), make([]float32, w.dim)
	if !w.centroid(analyze(a, nil, false), ca) || !w.centroid(analyze(b, nil, false), cb) {
		return 0
	}
	return dot(ca, cb)
}

// centroid writes into dst the unit-length sum of the vectors of the
// distinct whole words among terms, each weighted by its idf in the corpus
// (a word most skills use says little about what a text is about). It
// reports false, leaving dst zero, when no word is in the table. Parts of
// compound words are left out: the whole word has its own vector.
func (w *WordVectors) centroid(terms []term, dst []float32) bool {
	clear(dst)
	seen := map[int32]bool{}
	for _, t := range terms {
		if t.weight != 1 {
			continue
		}
		i, ok := w.index[t.text]
		if !ok || seen[i] {
			continue
		}
		seen[i] = true
		idf := float32(math.Log(float64(w.docs) / float64(w.df[i])))
		row := w.vecs[int(i)*w.dim : int(i+1)*w.dim]
		for k, x := range row {
			dst[k] += idf * x
		}
	}
	return normalize(dst)
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

func dot(a, b []float32) float64 {
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return float64(s)
}

// The file format: a header line "skillhost-wordvec 1 WORDS DIM DOCS\n",
// then for each word its length and bytes, its document frequency (both
// unsigned varints), a float32 scale and DIM signed bytes; a component is
// its byte times the scale. Quantising to a byte keeps the built-in table
// to a few megabytes and moves a cosine by well under 0.01.
const wordVecMagic = "skillhost-wordvec"

// WriteTo writes the table in the format ReadWordVectors reads.
func (w *WordVectors) WriteTo(out io.Writer) (int64, error) {
	bw := bufio.NewWriter(out)
	n, _ := fmt.Fprintf(bw, "%s 1 %d %d %d\n", wordVecMagic, len(w.words), w.dim, w.docs)
	written := int64(n)
	var buf [binary.MaxVarintLen64]byte
	q := make([]byte, w.dim)
	for i, word := range w.words {
		k := binary.PutUvarint(buf[:], uint64(len(word)))
		bw.Write(buf[:k])
		bw.WriteString(word)
		written += int64(k + len(word))
		k = binary.PutUvarint(buf[:], uint64(w.df[i]))
		bw.Write(buf[:k])
		written += int64(k)
		row := w.vecs[i*w.dim : (i+1)*w.dim]
		var peak float32
		for _, x := range row {
			peak = max(peak, float32(math.Abs(float64(x))))
		}
		scale := peak / 127
		for j, x := range row {
			if scale > 0 {
				q[j] = byte(int8(math.Round(float64(x / scale))))
			} else {
				q[j] = 0
			}
		}
		binary.Write(bw, binary.LittleEndian, scale)
		bw.Write(q)
		written += 4 + int64(w.dim)
	}
	return written, bw.Flush()
}

// ReadWordVectors reads a table written by WriteTo. Rows are normalised
// again after dequantising.
func ReadWordVectors(r io.Reader) (*WordVectors, error) {
	br := bufio.NewReader(r)
	header, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("word vectors: header: %w", err)
	}
	var magic string
	var version, words, dim, docs int
	if _, err := fmt.Sscanf(header, "%s %d %d %d %d\n", &magic, &version, &words, &dim, &docs); err != nil || magic != wordVecMagic {
		return nil, fmt.Errorf("word vectors: not a skillhost word-vector table (header %q)", truncate(header, 40))
	}
	if version != 1 {
		return nil, fmt.Errorf("word vectors: format version %d, want 1", version)
	}
	if words < 0 || dim <= 0 || dim > 4096 || docs <= 0 || words > 10_000_000 {
		return nil, fmt.Errorf("word vectors: implausible size: %d words of %d dimensions from %d documents", words, dim, docs)
	}
	w := &WordVectors{dim: dim, docs: docs, index: make(map[string]int32, words),
		words: make([]string, 0, words), df: make([]uint32, 0, words), vecs: make([]float32, 0, words*dim)}
	q := make([]byte, dim)
	for i := range words {
		n, err := binary.ReadUvarint(br)
		if err != nil || n == 0 || n > 256 {
			return nil, fmt.Errorf("word vectors: word %d: bad length", i)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("word vectors: word %d: %w", i, err)
		}
		df, err := binary.ReadUvarint(br)
		if err != nil || df == 0 || df > uint64(docs) {
			return nil, fmt.Errorf("word vectors: word %q: bad document frequency", b)
		}
		var scale float32
		if err := binary.Read(br, binary.LittleEndian, &scale); err != nil {
			return nil, fmt.Errorf("word vectors: word %q: %w", b, err)
		}
		if _, err := io.ReadFull(br, q); err != nil {
			return nil, fmt.Errorf("word vectors: word %q: %w", b, err)
		}
		word := string(b)
		if _, dup := w.index[word]; dup {
			return nil, fmt.Errorf("word vectors: word %q twice", word)
		}
		w.index[word] = int32(i)
		w.words = append(w.words, word)
		w.df = append(w.df, uint32(df))
		start := len(w.vecs)
		for _, x := range q {
			w.vecs = append(w.vecs, float32(int8(x))*scale)
		}
		normalize(w.vecs[start:])
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, errors.New("word vectors: data after the last word")
	}
	return w, nil
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
// registry of skills (docs/matching.md says which, and how to rebuild it
// with tools/wordvec). It is read once, on first use.
var DefaultWordVectors = sync.OnceValue(func() *WordVectors {
	w, err := ReadWordVectors(bytes.NewReader(builtinWordVectors))
	if err != nil {
		panic("built-in " + err.Error()) // the table is part of the source tree
	}
	return w
})
