package match

import (
	"encoding/json"
	"fmt"
	"html"
	"sort"
	"strings"

	"github.com/skillhost/skillhost/host/skill"
)

// Prompt formats.
const (
	FormatXML  = "xml"
	FormatJSON = "json"
)

// Entry is one skill in a system-prompt catalog.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Location    string `json:"location"`
}

// PromptResult is a rendered catalog and what was cut to fit its budget.
type PromptResult struct {
	Text string
	// Shortened counts descriptions cut to ShortenedTo characters.
	Shortened   int
	ShortenedTo int
	// Dropped lists the skills left out, lowest-ranked first.
	Dropped []string
}

// minDescription is the shortest a description is cut to before skills are
// dropped instead.
const minDescription = 40

// Prompt renders skills, in rank order, as the catalog an agent's system
// prompt lists: <available_skills> of <skill> with <name>, <description>
// and <location> (the absolute SKILL.md), values escaped, in the form of
// the Agent Skills reference tool; or the same as JSON. A budget > 0 caps
// the length in characters: descriptions are shortened first (all to the
// same length, never below 40 characters), then the lowest-ranked skills
// are dropped.
func Prompt(skills []*skill.Skill, format string, budget int) (PromptResult, error) {
	entries := make([]Entry, len(skills))
	longest := 0
	for i, s := range skills {
		// XML escaping leaves control characters, which a terminal (or a
		// model reading the prompt) would see raw.
		entries[i] = Entry{Name: skill.Printable(s.Name), Description: skill.Printable(oneLine(s.Description)), Location: skill.Printable(s.File)}
		longest = max(longest, len([]rune(entries[i].Description)))
	}
	render := func(es []Entry, limit int) (string, int, error) {
		cut := 0
		shown := make([]Entry, len(es))
		for i, e := range es {
			if r := []rune(e.Description); limit > 0 && len(r) > limit {
				e.Description = string(r[:limit-1]) + "…"
				cut++
			}
			shown[i] = e
		}
		text, err := renderPrompt(shown, format)
		return text, cut, err
	}
	text, _, err := render(entries, 0)
	if err != nil || budget <= 0 || len([]rune(text)) <= budget {
		return PromptResult{Text: text}, err
	}
	fits := func(n, limit int) bool {
		t, _, _ := render(entries[:n], limit)
		return len([]rune(t)) <= budget
	}
	// The most skills that fit with descriptions at their shortest: the
	// text only grows with n, so halving finds it.
	n := sort.Search(len(entries)+1, func(n int) bool { return !fits(n, minDescription) }) - 1
	if n < 0 {
		return PromptResult{}, fmt.Errorf("a budget of %d characters cannot hold even an empty catalog", budget)
	}
	if t, _, _ := render(entries[:n], 0); len([]rune(t)) <= budget {
		return dropped(PromptResult{Text: t}, entries, n), nil
	}
	// The longest description cap that fits, found by halving; it exists,
	// as minDescription fits.
	best := minDescription
	for lo, hi := minDescription+1, longest; lo <= hi; {
		mid := (lo + hi) / 2
		if fits(n, mid) {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	t, cut, _ := render(entries[:n], best)
	return dropped(PromptResult{Text: t, Shortened: cut, ShortenedTo: best}, entries, n), nil
}

// dropped records the entries after the first n as dropped.
func dropped(res PromptResult, entries []Entry, n int) PromptResult {
	for i := len(entries) - 1; i >= n; i-- {
		res.Dropped = append(res.Dropped, entries[i].Name)
	}
	return res
}

func renderPrompt(entries []Entry, format string) (string, error) {
	switch format {
	case FormatJSON:
		if entries == nil {
			entries = []Entry{}
		}
		data, err := json.MarshalIndent(entries, "", "  ")
		return string(data) + "\n", err
	case FormatXML, "":
		var b strings.Builder
		b.WriteString("<available_skills>\n")
		for _, e := range entries {
			fmt.Fprintf(&b, "<skill>\n<name>\n%s\n</name>\n<description>\n%s\n</description>\n<location>\n%s\n</location>\n</skill>\n",
				html.EscapeString(e.Name), html.EscapeString(e.Description), html.EscapeString(e.Location))
		}
		b.WriteString("</available_skills>\n")
		return b.String(), nil
	}
	return "", fmt.Errorf("format %q is neither xml nor json", format)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
