package matchtext

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// stopWordSet returns the stop words, which carry no topic: English function words and the filler of
// requests to an agent ("could you please help me with", "explain how
// this works", "improve my ..."): a request verb says what to do, not
// what about, and in a small catalog the one skill whose description
// happens to use it would win on it alone. They are
// compared after stemming, so every inflection goes too ("helps",
// "wanted"); domain words such as "skill" and "tool" are not stop words,
// since a catalog may well have a skill about skills.
// It is built on first use, not at start-up: a program that never matches
// (skillhost run) does not stem the list.
var stopWordSet = sync.OnceValue(func() map[string]bool {
	return stemSet(`a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having he
her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves
also anything get got give go going help hey hi hello let lets like make may maybe might much must need
please pls thank thanks want way well yes yeah ok okay one really something thing use
explain improve work
im ive id ill youre were theyre whats thats theres heres lets`)
})

// irregularPlurals are Latin and Greek plurals of technical English that
// Porter2 stems apart from their singular ("matrices" is matric, "matrix"
// matrix) or into a stop word ("theses" is these).
var irregularPlurals = map[string]string{
	"analyses": "analysis", "appendices": "appendix", "axes": "axis", "criteria": "criterion",
	"crises": "crisis", "diagnoses": "diagnosis", "ellipses": "ellipsis", "hypotheses": "hypothesis",
	"indices": "index", "matrices": "matrix", "parentheses": "parenthesis", "schemata": "schema",
	"synopses": "synopsis", "theses": "thesis", "vertices": "vertex",
}

func stemSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
		set[english.Stem(w, false)] = true
	}
	return set
}

// Term is one indexed or queried unit of text with the weight it counts
// for: whole words 1, the parts of a compound word and word pairs less.
type Term struct {
	Text   string
	Weight float64
	// Whole is, for a part of a compound word, the whole word's text.
	Whole string
}

// PartWeight and BigramWeight are the term weights of the parts of
// compound words and of word pairs, relative to whole words. Parts count less so "TypeScript" is not as good as two
// words "type" and "script"; pairs add a little for phrases that appear
// as written ("pivot table").
const (
	PartWeight   = 0.3
	BigramWeight = 0.5
)

// Tokens splits text into stemmed, lower-case terms. Words break at
// anything but letters, digits and an apostrophe inside a word; kebab-case,
// snake_case and file names (report.pdf) split too. A word that changes
// case inside (TypeScript, GitHub, XMLParser) gives the whole word and
// its parts, at reduced weight except for a word and a number (SEV2,
// python3), whose word counts in full. Stop words go after stemming; contractions lose their
// suffix ("user's" is "user", "what's" is "what" and so a stop word) and
// negations ("don't") go. Stemming is Porter2, so "summaries" and
// "summarize" meet at "summari".
func Tokens(text string) []string {
	var out []string
	for _, t := range Analyze(text, nil, false) {
		out = append(out, t.Text)
	}
	return out
}

// Memo caches stems across calls to Analyze; indexing a large catalog is
// dominated by stemming otherwise.
type Memo struct {
	stems map[string]string
}

func NewMemo() *Memo { return &Memo{stems: map[string]string{}} }

// stem is w's Porter2 stem; m may be nil, which caches nothing.
func (m *Memo) stem(w string) string {
	if m == nil {
		return english.Stem(w, false)
	}
	st, ok := m.stems[w]
	if !ok {
		st = english.Stem(w, false)
		m.stems[w] = st
	}
	return st
}

// Analyze returns the weighted terms of text, word pairs included when
// pairs is set. m may be nil.
func Analyze(text string, m *Memo, pairs bool) []Term {
	return Scan(text, m, pairs).terms
}

// Scanned is the analysis of a text that may follow another: what a word
// pair across the join needs, besides the terms.
type Scanned struct {
	terms []Term
	// lead is the first word kept, when nothing before it broke the run
	// of words (a stop word, a negation): a text before this one ending
	// in a kept word makes a pair with it. leadEnd is where in terms that
	// pair would go: after lead's own terms.
	lead    string
	leadEnd int
	// end is the last word kept when the run reaches the end of the text,
	// else ""; through is set when the text neither keeps a word nor
	// breaks the run, so the word before it passes through.
	end     string
	through bool
}

// Scan is Analyze with the state a following text needs (Scanned).
// Analyze(a + "\n" + b) has the terms of Scan(a), then those of Scan(b)
// with the pair of a's end and b's lead at b's leadEnd (see JoinScans).
func Scan(text string, m *Memo, pairs bool) Scanned {
	var out []Term
	var sc Scanned
	stopWords := stopWordSet()
	touched := false // a word kept, or the run broken
	prevWord := ""   // the last whole word kept, for pairs
	stem := m.stem
	keep := func(w string) (string, bool) {
		if isNumber(w) {
			// Small numbers (page 2, 5 slides) say nothing of the topic;
			// larger ones may (HTTP 429, the year 2014).
			return w, len(w) >= 3
		}
		if len(w) < 2 || len(w) < 4 && utf8.RuneCountInString(w) < 2 {
			return "", false
		}
		// Short words are not stemmed: most are acronyms or names (AWS,
		// CSS, ios) that Porter2 would cut.
		if sg, ok := irregularPlurals[w]; ok {
			w = sg
		} else if sg := vowellessPlural(w); sg != "" {
			w = sg // pdfs, csvs: an acronym's plural written in lower case
		}
		st := w
		if len(w) > 3 {
			st = stem(w)
		}
		if stopWords[w] || stopWords[st] {
			return "", false
		}
		return st, true
	}
	for _, raw := range words(text) {
		if i := strings.IndexByte(raw, '\''); i >= 0 {
			if strings.HasSuffix(raw, "n't") || strings.HasSuffix(raw, "N'T") {
				prevWord, touched = "", true
				continue // negations carry no topic
			}
			raw = raw[:i]
			if raw == "" {
				continue
			}
		}
		if acronymPlural(raw) {
			raw = raw[:len(raw)-1] // PDFs, APIs, URLs
		}
		w := strings.ToLower(raw)
		compound := w != raw || strings.ContainsAny(w, "_0123456789")
		var st string
		var ok bool
		if strings.Contains(w, "_") {
			st, ok = w, true // an identifier: kept whole, unstemmed
		} else {
			st, ok = keep(w)
		}
		if !ok {
			prevWord, touched = "", true
			continue
		}
		out = append(out, Term{Text: st, Weight: 1})
		lead := !touched
		touched = true
		if compound {
			if parts := caseParts(raw); len(parts) > 1 && len(parts) <= 4 {
				// A word and a number (SEV2, python3, node18) is the word
				// with a version or a level: the word counts in full.
				weight := PartWeight
				if len(parts) == 2 && !strings.ContainsFunc(parts[0], unicode.IsDigit) && isNumber(parts[1]) {
					weight = 1
				}
				for _, p := range parts {
					if ps, ok := keep(strings.ToLower(p)); ok && ps != st {
						out = append(out, Term{Text: ps, Weight: weight, Whole: st})
					}
				}
			}
		}
		if lead {
			sc.lead, sc.leadEnd = st, len(out)
		}
		if pairs && prevWord != "" {
			out = append(out, Term{Text: prevWord + " " + st, Weight: BigramWeight})
		}
		prevWord = st
	}
	sc.terms, sc.end, sc.through = out, prevWord, !touched
	return sc
}

// JoinScans returns the terms Analyze would give the texts of parts joined
// by newlines, each scanned alone (with the same pairs setting), so that a
// text met many times is analysed once.
func JoinScans(parts []Scanned, pairs bool) []Term {
	var out []Term
	prev := ""
	for _, p := range parts {
		if pairs && prev != "" && p.lead != "" {
			out = append(out, p.terms[:p.leadEnd]...)
			out = append(out, Term{Text: prev + " " + p.lead, Weight: BigramWeight})
			out = append(out, p.terms[p.leadEnd:]...)
		} else {
			out = append(out, p.terms...)
		}
		if !p.through {
			prev = p.end
		}
	}
	return out
}

// words splits text at anything but letters, digits, and apostrophes and
// underscores inside a word. Typographic apostrophes become ASCII ones.
func words(text string) []string {
	var out []string
	start := -1
	var prev rune
	emit := func(w string) {
		if strings.ContainsRune(w, '’') {
			w = strings.ReplaceAll(w, "’", "'")
		}
		out = append(out, strings.TrimRight(w, "'_"))
	}
	for i, r := range text {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r) ||
			(r == '\'' || r == '’') && unicode.IsLetter(prev) ||
			r == '_' && (unicode.IsLetter(prev) || unicode.IsDigit(prev))
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			emit(text[start:i])
			start = -1
		}
		prev = r
	}
	if start >= 0 {
		emit(text[start:])
	}
	return out
}

// caseParts splits a word at underscores (snake_case identifiers such as
// for_each or work_mem) and where its case changes: lower to upper
// (camelCase), at the end of an upper-case run followed by a lower-case
// letter (XMLParser: XML, Parser), and between letters and digits (SEV2,
// utf8). A word without such a change is one part.
func caseParts(w string) []string {
	if strings.Contains(w, "_") {
		var parts []string
		for _, p := range strings.Split(w, "_") {
			if p != "" {
				parts = append(parts, caseParts(p)...)
			}
		}
		return parts
	}
	rs := []rune(w)
	var parts []string
	start := 0
	for i := 1; i < len(rs); i++ {
		lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
		acronymEnd := i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
		digitEdge := unicode.IsDigit(rs[i-1]) != unicode.IsDigit(rs[i])
		if lowerToUpper || acronymEnd || digitEdge {
			parts = append(parts, string(rs[start:i]))
			start = i
		}
	}
	return append(parts, string(rs[start:]))
}

// vowellessPlural returns w without its final s when the rest is a word of
// three or more letters with no vowel: the plural of an acronym written in
// lower case (pdfs, csvs), which Porter2 keeps whole because its rule for
// a plural s wants a vowel before it. Acronyms with a vowel (apis, urls)
// the stemmer handles. Protocols whose name ends in s (https, ftps) are not plurals.
func vowellessPlural(w string) string {
	if len(w) < 4 || w[len(w)-1] != 's' || secureProtocols[w] {
		return ""
	}
	rest := w[:len(w)-1]
	for _, r := range rest {
		if r < 'a' || r > 'z' || strings.ContainsRune("aeiouy", r) {
			return ""
		}
	}
	return rest
}

// secureProtocols are names whose final s means "secure", not "many".
var secureProtocols = map[string]bool{"https": true, "ftps": true, "smtps": true, "ldaps": true, "nntps": true}

// acronymPlural reports whether w is an upper-case acronym with a plural s.
func acronymPlural(w string) bool {
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

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

// Analyzer splits texts into words as the matcher does, remembering the
// stems it has computed: what an offline tool that reads a large corpus
// needs. It is not safe for concurrent use.
type Analyzer struct{ m *Memo }

// NewAnalyzer returns an Analyzer with no stems remembered.
func NewAnalyzer() *Analyzer { return &Analyzer{NewMemo()} }

// WholeWords returns text's whole words, stemmed, in order: what Tokens
// gives without the lesser parts of compound words.
func (a *Analyzer) WholeWords(text string) []string {
	var out []string
	for _, t := range Analyze(text, a.m, false) {
		if t.Weight == 1 {
			out = append(out, t.Text)
		}
	}
	return out
}

// EverydayWords returns the words the everyday classifier weighs in
// message (see Everyday): its distinct stemmed words, stop words
// included.
func (a *Analyzer) EverydayWords(message string) []string { return EverydayWords(message, a.m) }

// SplitMarkdown splits a skill's Markdown body into its headings (each
// without its #s, one a line), which the matcher scores with the outline,
// and the rest, which it scores as the body. A line in a fenced code block
// is body, whatever it starts with.
func SplitMarkdown(body string) (headings, rest string) {
	var outline, text strings.Builder
	inFence := false
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(trimmed, "#") {
			outline.WriteString(strings.TrimLeft(trimmed, "# "))
			outline.WriteByte('\n')
			continue
		}
		text.WriteString(line)
		text.WriteByte('\n')
	}
	return outline.String(), text.String()
}
