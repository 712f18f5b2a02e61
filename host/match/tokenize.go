package match

import (
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// stopWords carry no topic: English function words and the filler of
// requests to an agent ("could you please help me with").
var stopWords = toSet(`a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having he
her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves
also anything get got give go going help hey hi hello let lets like make may maybe might much must need needs
please pls thank thanks want wanted wants way well yes yeah ok okay one really something thing things use using
used skill tool tools can't don't i'm it's i'd i've`)

func toSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}

// Tokens splits text into stemmed, lower-case terms. Words break at
// anything but letters and digits, so kebab-case, snake_case and file
// names (report.pdf) split too, and at lower-to-upper case changes
// (camelCase); stop words go; plurals and other suffixes are stemmed
// (Porter2), so "summaries" and "summarize" meet at "summari".
func Tokens(text string) []string { return tokens(text, nil) }

// tokens is Tokens with an optional memo of stems, which indexing a large
// catalog shares across skills (stemming dominates the cost otherwise).
func tokens(text string, memo map[string]string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		if acronymPlural(word) {
			word = word[:len(word)-1] // PDFs, APIs, URLs
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if stopWords[w] || len(w) < 2 && !unicode.IsDigit([]rune(w)[0]) {
			return
		}
		if memo == nil {
			out = append(out, english.Stem(w, false))
			return
		}
		st, ok := memo[w]
		if !ok {
			st = english.Stem(w, false)
			memo[w] = st
		}
		out = append(out, st)
	}
	var prev rune
	for _, r := range text {
		switch {
		case r == '\'' && unicode.IsLetter(prev):
			// Contractions and possessives stay one word ("don't", "user's").
			word = append(word, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			word = append(word, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// acronymPlural reports whether w is an upper-case acronym with a plural s.
func acronymPlural(w []rune) bool {
	if len(w) < 3 || w[len(w)-1] != 's' {
		return false
	}
	for _, r := range w[:len(w)-1] {
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}
