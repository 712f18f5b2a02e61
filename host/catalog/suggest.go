package catalog

import (
	"sort"
	"strings"
)

// Suggest returns up to three candidates close to name: same folded
// spelling, a shared prefix or substring, or a small edit distance.
func Suggest(name string, candidates []string) []string {
	type scored struct {
		s    string
		dist int
	}
	target := Fold(name)
	var hits []scored
	for _, c := range candidates {
		fc := Fold(c)
		d := editDistance(target, fc)
		limit := max(2, len([]rune(target))/3)
		if d <= limit || (len(target) >= 3 && (strings.Contains(fc, target) || strings.Contains(target, fc))) {
			hits = append(hits, scored{c, d})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].dist != hits[j].dist {
			return hits[i].dist < hits[j].dist
		}
		return hits[i].s < hits[j].s
	})
	var out []string
	for i := 0; i < len(hits) && i < 3; i++ {
		out = append(out, hits[i].s)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
