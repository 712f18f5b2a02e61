package main

import (
	"errors"
	"iter"
	"math"
	"math/rand"
	"slices"
	"sort"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// vectorOptions size a table built by buildVectors. Zero values
// take the defaults, which built the table in the binary.
type vectorOptions struct {
	// Words is how many words the table keeps, those most documents
	// have (default 30,000).
	Words int
	// Dim is the length of the vectors (default 100).
	Dim int
	// Window is how many words either side of a word count as near it;
	// a word d places away counts 1/d (default 4).
	Window int
	// MaxWords is how many words of each document are read (default
	// 4,000): a few 10,000-word API references would otherwise outweigh
	// thousands of ordinary skills.
	MaxWords int
	// Seed seeds the random projection, so a build is reproducible.
	Seed int64
}

func (o vectorOptions) withDefaults() vectorOptions {
	if o.Words <= 0 {
		o.Words = 30000
	}
	if o.Dim <= 0 {
		o.Dim = 100
	}
	if o.Window <= 0 {
		o.Window = 4
	}
	if o.MaxWords <= 0 {
		o.MaxWords = 4000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// buildVectors learns word vectors from docs, each the text of one
// skill, tokenised as the matcher does (matchtext.Tokens). It counts how often each
// pair of the most common words occurs near each other, turns the counts
// into positive pointwise mutual information (with the context
// distribution smoothed to the power 0.75), and keeps the leading
// dimensions of that matrix's singular value decomposition, computed by
// random projection with two power iterations, each word's vector being
// its row of U times the square root of the singular values, normalised.
// The result depends only on docs and o. It needs memory for every pair
// of words that occur near each other: about 3 GB for 40,000 skills.
func buildVectors(docs iter.Seq[string], o vectorOptions) (*matchtext.WordVectors, error) {
	o = o.withDefaults()
	seqs, df := wordSequences(docs, o)
	if len(seqs) == 0 {
		return nil, errors.New("build word vectors: no documents")
	}
	words := make([]string, 0, len(df))
	for w := range df {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		a, b := words[i], words[j]
		return df[a] > df[b] || df[a] == df[b] && a < b
	})
	words = words[:min(len(words), o.Words)]
	if len(words) < o.Dim+20 {
		return nil, errors.New("build word vectors: fewer words than dimensions")
	}
	id := make(map[string]int32, len(words))
	for i, w := range words {
		id[w] = int32(i)
	}
	// What is no longer needed goes before the next step: the counts
	// of a large corpus take gigabytes.
	ndocs := len(seqs)
	counts := cooccurrences(seqs, id, o.Window)
	seqs = nil
	ppmi := positivePMI(counts, len(words))
	counts = nil
	u, s := truncatedSVD(ppmi, o.Dim, o.Seed)
	counts32 := make([]int, len(words))
	rows := make([][]float32, len(words))
	for i, word := range words {
		counts32[i] = df[word]
		rows[i] = make([]float32, o.Dim)
		for k := range rows[i] {
			rows[i][k] = float32(u[i][k] * math.Sqrt(s[k]))
		}
	}
	return matchtext.NewWordVectors(ndocs, words, counts32, rows)
}

// wordSequences analyses each document into its whole words (at most
// o.MaxWords), and counts the documents each word is in.
func wordSequences(docs iter.Seq[string], o vectorOptions) ([][]string, map[string]int) {
	a := matchtext.NewAnalyzer()
	var seqs [][]string
	df := map[string]int{}
	for doc := range docs {
		var seq []string
		seen := map[string]bool{}
		for _, w := range a.WholeWords(doc) {
			seq = append(seq, w)
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
			if len(seq) == o.MaxWords {
				break
			}
		}
		seqs = append(seqs, seq)
	}
	return seqs, df
}

// cooccurrences counts, both ways, the words of the table (id) that occur
// within window words of each other, each pair weighted 1/distance; keys
// are row<<32|column.
func cooccurrences(seqs [][]string, id map[string]int32, window int) map[uint64]float32 {
	counts := map[uint64]float32{}
	ids := []int32{}
	for _, seq := range seqs {
		ids = ids[:0]
		for _, w := range seq {
			i, ok := id[w]
			if !ok {
				i = -1
			}
			ids = append(ids, i)
		}
		for a, i := range ids {
			if i < 0 {
				continue
			}
			for d := 1; d <= window && a+d < len(ids); d++ {
				j := ids[a+d]
				if j < 0 || j == i {
					continue
				}
				c := 1 / float32(d)
				counts[uint64(i)<<32|uint64(j)] += c
				counts[uint64(j)<<32|uint64(i)] += c
			}
		}
	}
	return counts
}

// positivePMI turns co-occurrence counts into the sparse positive
// pointwise mutual information matrix of n words, contexts smoothed by the
// power 0.75.
func positivePMI(counts map[uint64]float32, n int) [][]entry {
	keys := make([]uint64, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys) // sums in one order, so a build is reproducible
	rowSum := make([]float64, n)
	for _, k := range keys {
		rowSum[k>>32] += float64(counts[k])
	}
	ctx := make([]float64, n)
	var ctxTotal float64
	for j, s := range rowSum {
		ctx[j] = math.Pow(s, 0.75)
		ctxTotal += ctx[j]
	}
	ppmi := make([][]entry, n)
	for _, k := range keys {
		i, j := int(k>>32), int(k&math.MaxUint32)
		if v := math.Log(float64(counts[k]) * ctxTotal / (rowSum[i] * ctx[j])); v > 0 {
			ppmi[i] = append(ppmi[i], entry{int32(j), float32(v)})
		}
	}
	return ppmi
}

// entry is one non-zero of a sparse row.
type entry struct {
	col int32
	v   float32
}

// truncatedSVD returns the leading k left singular vectors (rows of u) and
// singular values of the sparse n×n matrix a, by random projection with
// oversampling and two power iterations (Halko, Martinsson and Tropp).
func truncatedSVD(a [][]entry, k int, seed int64) ([][]float64, []float64) {
	n := len(a)
	l := k + 20
	mul := func(x [][]float64) [][]float64 { // a·x
		y := make([][]float64, n)
		for i := range y {
			y[i] = make([]float64, l)
			for _, e := range a[i] {
				xr := x[e.col]
				for c := range y[i] {
					y[i][c] += float64(e.v) * xr[c]
				}
			}
		}
		return y
	}
	mulT := func(x [][]float64) [][]float64 { // aᵀ·x
		y := make([][]float64, n)
		for i := range y {
			y[i] = make([]float64, l)
		}
		for i, row := range a {
			for _, e := range row {
				yr := y[e.col]
				for c, xv := range x[i] {
					yr[c] += float64(e.v) * xv
				}
			}
		}
		return y
	}
	rng := rand.New(rand.NewSource(seed))
	omega := make([][]float64, n)
	for i := range omega {
		omega[i] = make([]float64, l)
		for c := range omega[i] {
			omega[i][c] = rng.NormFloat64()
		}
	}
	q := mul(omega)
	orthonormalize(q)
	for range 2 {
		z := mulT(q)
		orthonormalize(z)
		q = mul(z)
		orthonormalize(q)
	}
	// With b = qᵀa, b·bᵀ = zᵀz for z = aᵀq; its eigenvectors rotate q
	// into the left singular vectors, its eigenvalues are their squares.
	z := mulT(q)
	bbt := make([][]float64, l)
	for r := range bbt {
		bbt[r] = make([]float64, l)
	}
	for _, zr := range z {
		for r, x := range zr {
			for c, y := range zr {
				bbt[r][c] += x * y
			}
		}
	}
	eig, vec := symmetricEigen(bbt)
	order := make([]int, l)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return eig[order[i]] > eig[order[j]] })
	u := make([][]float64, n)
	for i := range u {
		u[i] = make([]float64, k)
		for c := range k {
			col := order[c]
			var x float64
			for r := range l {
				x += q[i][r] * vec[r][col]
			}
			u[i][c] = x
		}
	}
	s := make([]float64, k)
	for c := range k {
		s[c] = math.Sqrt(max(0, eig[order[c]]))
	}
	return u, s
}

// orthonormalize makes the columns of y orthonormal (modified
// Gram-Schmidt); a column that vanishes stays zero.
func orthonormalize(y [][]float64) {
	if len(y) == 0 {
		return
	}
	cols := len(y[0])
	for c := range cols {
		for p := range c {
			var d float64
			for _, r := range y {
				d += r[c] * r[p]
			}
			for _, r := range y {
				r[c] -= d * r[p]
			}
		}
		var s float64
		for _, r := range y {
			s += r[c] * r[c]
		}
		if s == 0 {
			continue
		}
		inv := 1 / math.Sqrt(s)
		for _, r := range y {
			r[c] *= inv
		}
	}
}

// symmetricEigen returns the eigenvalues of the symmetric matrix a and its
// eigenvectors as columns, by cyclic Jacobi rotations; a is overwritten.
func symmetricEigen(a [][]float64) ([]float64, [][]float64) {
	n := len(a)
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, n)
		v[i][i] = 1
	}
	for range 100 {
		var off, diag float64
		for p := range n {
			diag += a[p][p] * a[p][p]
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off <= 1e-24*diag {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if a[p][q] == 0 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					akp, akq := a[k][p], a[k][q]
					a[k][p], a[k][q] = c*akp-s*akq, s*akp+c*akq
				}
				for k := range n {
					apk, aqk := a[p][k], a[q][k]
					a[p][k], a[q][k] = c*apk-s*aqk, s*apk+c*aqk
				}
				for k := range n {
					vkp, vkq := v[k][p], v[k][q]
					v[k][p], v[k][q] = c*vkp-s*vkq, s*vkp+c*vkq
				}
			}
		}
	}
	eig := make([]float64, n)
	for i := range eig {
		eig[i] = a[i][i]
	}
	return eig, v
}
