package match

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/internal/matchtext"
	"github.com/skillhost/skillhost/internal/testskill"
)

func TestTokens(t *testing.T) {
	tests := map[string][]string{
		"check-deploy.sh":               {"check", "deploy", "sh"},
		"csv_summary":                   {"csv_summary", "csv", "summari"},
		"parseDurationValue":            {"parsedurationvalu", "pars", "durat", "valu"},
		"Summaries of the summarized":   {"summari", "summar"},
		"Could you please help me with": nil,
		"report.pdf files, 2 PDFs, 429": {"report", "pdf", "file", "pdf", "429"},
		"don't":                         nil,
		"Übersetzung ins Deutsche":      {"übersetzung", "ins", "deutsch"},
		// Stop words are checked after stemming; skill and tool are not
		// stop words; contractions lose their suffix.
		"help me make a new skill for our deployment runbook": {"new", "skill", "deploy", "runbook"},
		"what's the skill's tools":                            {"skill", "tool"},
		// Compound words give the whole and the parts; acronyms are not
		// stemmed (AWS is not "aw").
		"TypeScript on GitHub, AWS, XMLParser, SEV2": {"typescript", "type", "script", "github", "git", "hub", "aws", "xmlparser", "xml", "parser", "sev2", "sev"},
		"for_each": {"for_each"},
		// Latin and Greek plurals meet their singular; "theses" is not
		// the stop word "these".
		"job matrices, a matrix, theses and a thesis": {"job", "matrix", "matrix", "thesi", "thesi"},
		// Request verbs say what to do, not what about.
		"explain how this works, then improve my workflow": {"workflow"},
		// An acronym's plural in lower case meets the acronym; ones with a
		// vowel the stemmer already meets.
		"merge two pdfs, three csvs, some apis and urls": {"merg", "two", "pdf", "three", "csv", "api", "url"},
		// A protocol named with a final s keeps it.
		"serve https": {"serv", "https"},
	}
	for in, want := range tests {
		if got := matchtext.Tokens(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnalyzePairs(t *testing.T) {
	got := matchtext.Analyze("pivot tables in Excel", nil, true)
	want := []matchtext.Term{{Text: "pivot", Weight: 1}, {Text: "tabl", Weight: 1}, {Text: "pivot tabl", Weight: matchtext.BigramWeight}, {Text: "excel", Weight: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("analyze = %+v, want %+v", got, want)
	}
}

func names(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Skill.Name)
	}
	return out
}

func TestEngine(t *testing.T) {
	root := t.TempDir()
	testskill.Add(t, root, "pdf-tools", testskill.Skill{Name: "pdf-tools", Description: "Extract text from PDF files and merge PDF documents.", Body: "Use pdftotext.\n"})
	testskill.Add(t, root, "csv-summary", testskill.Skill{Name: "csv-summary", Description: "Summarize CSV files: rows, columns and statistics."})
	testskill.Add(t, root, "git-history", testskill.Skill{Name: "git-history", Description: "Explain a repository's history with git log and blame."})
	cat := catalog.New([]string{root})
	e := NewEngine(cat, NewLexical(LexicalOptions{}), DefaultLexicalThreshold, 0)
	ctx := context.Background()

	got, err := e.Match(ctx, "merge these two PDF files into one")
	if err != nil || len(got) == 0 || got[0].Skill.Name != "pdf-tools" {
		t.Fatalf("Match = %v, %v", names(got), err)
	}
	if got[0].Score <= 0 || got[0].Score >= 1 {
		t.Errorf("score %v is not in (0, 1)", got[0].Score)
	}
	if got, _ := e.Match(ctx, "what's the weather in Lisbon tomorrow?"); len(got) != 0 {
		t.Errorf("an off-topic message matched %v", names(got))
	}
	if got, _ := e.Match(ctx, ""); len(got) != 0 {
		t.Errorf("an empty message matched %v", names(got))
	}
	ranked, _ := e.Rank(ctx, "summarize the statistics of this csv")
	if len(ranked) != 3 || ranked[0].Skill.Name != "csv-summary" || ranked[0].Score < ranked[1].Score {
		t.Errorf("Rank = %v", ranked)
	}

	// A limit caps the matches; the catalog reloading re-indexes.
	limited := NewEngine(cat, NewLexical(LexicalOptions{}), 0.01, 1)
	if got, _ := limited.Match(ctx, "pdf csv git"); len(got) != 1 {
		t.Errorf("limit 1 gave %v", names(got))
	}
	testskill.Add(t, root, "image-resize", testskill.Skill{Name: "image-resize", Description: "Resize and crop images and photos."})
	if got, _ := e.Match(ctx, "resize my photos"); len(got) != 0 {
		t.Errorf("matched a skill the catalog has not loaded yet: %v", names(got))
	}
	cat.Reload()
	if got, _ := e.Match(ctx, "resize my photos"); len(got) == 0 || got[0].Skill.Name != "image-resize" {
		t.Errorf("after Reload: %v", names(got))
	}
}

func TestEngineConcurrent(t *testing.T) {
	cat := catalog.New(corpusRoots)
	e := NewEngine(cat, NewLexical(LexicalOptions{}), DefaultLexicalThreshold, 0)
	set := readLabelsFile(t, labelledFile)
	want := map[string][]string{}
	for _, l := range set {
		ms, _ := e.Match(context.Background(), l.Message)
		want[l.Message] = names(ms)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i, l := range set {
				if g == 0 && i%20 == 0 {
					cat.Reload()
				}
				ms, err := e.Match(context.Background(), l.Message)
				if err != nil || !reflect.DeepEqual(names(ms), want[l.Message]) {
					t.Errorf("concurrent Match(%q) = %v, %v", l.Message, names(ms), err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestPrompt(t *testing.T) {
	skills := []*skill.Skill{
		{Name: "pdf", Description: "Work with <PDF> files & forms, \"quoted\"", File: "/s/pdf/SKILL.md"},
		{Name: "csv", Description: strings.Repeat("Summarize CSV files. ", 10), File: "/s/csv/SKILL.md"},
		{Name: "git", Description: "History.", File: "/s/git/SKILL.md"},
	}
	res, err := Prompt(skills, FormatXML, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStart := "<available_skills>\n<skill>\n<name>\npdf\n</name>\n<description>\nWork with &lt;PDF&gt; files &amp; forms, &#34;quoted&#34;\n</description>\n<location>\n/s/pdf/SKILL.md\n</location>\n</skill>\n"
	if !strings.HasPrefix(res.Text, wantStart) || !strings.HasSuffix(res.Text, "</available_skills>\n") {
		t.Errorf("XML:\n%s", res.Text)
	}
	if empty, _ := Prompt(nil, FormatXML, 0); empty.Text != "<available_skills>\n</available_skills>\n" {
		t.Errorf("empty catalog: %q", empty.Text)
	}
	js, _ := Prompt(skills, FormatJSON, 0)
	if !strings.Contains(js.Text, `"location": "/s/csv/SKILL.md"`) {
		t.Errorf("JSON:\n%s", js.Text)
	}
	full := len([]rune(res.Text))

	// Over the budget: descriptions are shortened first...
	short, err := Prompt(skills, FormatXML, full-60)
	if err != nil || short.Shortened == 0 || len(short.Dropped) != 0 || len([]rune(short.Text)) > full-60 {
		t.Fatalf("shortening: %+v %v", short, err)
	}
	if !strings.Contains(short.Text, "…") {
		t.Error("a shortened description is not marked")
	}
	// ...then the lowest-ranked skills are dropped.
	tiny, err := Prompt(skills, FormatXML, 200)
	if err != nil || len(tiny.Dropped) == 0 || tiny.Dropped[0] != "git" || len([]rune(tiny.Text)) > 200 {
		t.Fatalf("dropping: %+v %v", tiny, err)
	}
	if _, err := Prompt(skills, FormatXML, 10); err == nil {
		t.Error("a budget below an empty catalog must fail")
	}
	if _, err := Prompt(skills, "yaml", 0); err == nil {
		t.Error("an unknown format must fail")
	}
}

// Prompt must pick what an exhaustive search picks: the most skills, then
// the longest description cap, that fit the budget.
func TestPromptBudgetMatchesExhaustiveSearch(t *testing.T) {
	var skills []*skill.Skill
	for i := 0; i < 8; i++ {
		skills = append(skills, &skill.Skill{
			Name:        fmt.Sprintf("skill-%d", i),
			Description: strings.Repeat("word & more ", 1+(i*7)%13),
			File:        fmt.Sprintf("/s/%d/SKILL.md", i),
		})
	}
	length := func(n, limit int) int {
		var shown []*skill.Skill
		for _, s := range skills[:n] {
			c := *s
			if r := []rune(oneLine(c.Description)); limit > 0 && len(r) > limit {
				c.Description = string(r[:limit-1]) + "…"
			}
			shown = append(shown, &c)
		}
		res, err := Prompt(shown, FormatXML, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len([]rune(res.Text))
	}
	full := length(len(skills), 0)
	for budget := 30; budget <= full+10; budget += 53 {
		wantN, wantCap := -1, 0
	search:
		for n := len(skills); n >= 0; n-- {
			if length(n, 0) <= budget {
				wantN = n
				break
			}
			for c := 160; c >= minDescription; c-- {
				if length(n, c) <= budget {
					wantN, wantCap = n, c
					break search
				}
			}
		}
		res, err := Prompt(skills, FormatXML, budget)
		if wantN < 0 {
			if err == nil {
				t.Errorf("budget %d: no error, want one", budget)
			}
			continue
		}
		if err != nil || len(skills)-len(res.Dropped) != wantN || res.ShortenedTo != wantCap {
			t.Errorf("budget %d: kept %d, cap %d, err %v; exhaustive search keeps %d with cap %d",
				budget, len(skills)-len(res.Dropped), res.ShortenedTo, err, wantN, wantCap)
		}
	}
}

// slowScorer widens the window between indexing and scoring, where a
// reload by another caller would pair one catalog's skills with another's
// scores if the engine let it.
type slowScorer struct{ *Lexical }

func (s slowScorer) Score(ctx context.Context, message string) ([]float64, error) {
	time.Sleep(200 * time.Microsecond)
	return s.Lexical.Score(ctx, message)
}

func (s slowScorer) Explain(ctx context.Context, message string) ([]Explanation, error) {
	time.Sleep(200 * time.Microsecond)
	return s.Lexical.Explain(ctx, message)
}

// A catalog that reloads while messages are ranked and explained must
// never pair one catalog's skills with another's scores: each result is
// the whole of one indexed set, and nothing fails or panics.
func TestRankDuringReloads(t *testing.T) {
	root := t.TempDir()
	for i := range 5 {
		name := fmt.Sprintf("pdf-tools-%d", i)
		testskill.Add(t, root, name, testskill.Skill{Name: name, Description: "Merge and split PDF files.", Body: "Use qpdf to merge PDF files.\n"})
	}
	cat := catalog.New([]string{root})
	// Breadth off: each reload re-measures it, which is not what this
	// test is about and would make it minutes long under -race.
	e := NewEngine(cat, slowScorer{NewLexical(LexicalOptions{Breadth: -1})}, DefaultLexicalThreshold, 0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			// Grow and shrink the catalog between 5 and 9 skills.
			dir := filepath.Join(root, fmt.Sprintf("extra-%d", i%4))
			var err error
			if i%8 < 4 {
				if err = os.MkdirAll(dir, 0o755); err == nil {
					err = os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+filepath.Base(dir)+"\ndescription: Merge files of any kind.\n---\nmerge\n"), 0o644)
				}
			} else {
				err = os.RemoveAll(dir)
			}
			if err != nil {
				t.Error(err)
				return
			}
			cat.Reload()
		}
	}()
	var rankers sync.WaitGroup
	for range 4 {
		rankers.Add(1)
		go func() {
			defer rankers.Done()
			for range 200 {
				ranked, err := e.Rank(context.Background(), "merge these pdf files")
				if err != nil {
					t.Error(err)
					return
				}
				// Skills of one kind have the same text, so the same score;
				// a score paired with the wrong skill breaks that.
				seen, kind := map[string]bool{}, map[bool]float64{}
				for _, m := range ranked {
					extra := strings.HasPrefix(m.Skill.Name, "extra-")
					if k, ok := kind[extra]; seen[m.Skill.Name] || m.Score <= 0 || ok && k != m.Score {
						t.Errorf("skills and scores do not pair up: %v", ranked)
						return
					}
					seen[m.Skill.Name], kind[extra] = true, m.Score
				}
				if len(ranked) < 5 || len(ranked) > 9 {
					t.Errorf("ranked %d skills, want 5 to 9", len(ranked))
					return
				}
				if _, err := e.Explain(context.Background(), "merge these pdf files", 0); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	rankers.Wait()
	close(done)
	wg.Wait()
}
