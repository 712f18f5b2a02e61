package match

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/internal/testskill"
)

func readLabelsFile(t testing.TB, path string) []Label {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := ReadLabels(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestReadLabels(t *testing.T) {
	good := "# comment\n{\"message\": \"merge PDFs\", \"expect\": \"pdf-tools\"}\n\n{\"message\": \"tell a joke\"}\n{\"message\": \"weather\", \"expect\": null}\n"
	set, err := ReadLabels(strings.NewReader(good), "l.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 3 || set[0].Expect != "pdf-tools" || set[0].Line != 2 || set[1].Expect != "" || set[2].Expect != "" || set[2].Line != 5 {
		t.Fatalf("got %+v", set)
	}
	bad := map[string]string{
		"{\"message\": \"a\"}\n{\"mesage\": \"b\"}\n": `l.jsonl:2: json: unknown field "mesage"`,
		"{\"expect\": \"x\"}\n":                       `l.jsonl:1: "message" is missing or empty`,
		"{\"message\": \"a\"} {\"message\": \"b\"}\n": "l.jsonl:1: more than one JSON value",
		"not json\n":         "l.jsonl:1: invalid character",
		"# only a comment\n": "l.jsonl: no labelled messages",
	}
	for in, want := range bad {
		if _, err := ReadLabels(strings.NewReader(in), "l.jsonl"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadLabels(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	root := t.TempDir()
	testskill.Add(t, root, "pdf-tools", testskill.Skill{Name: "pdf-tools", Description: "Extract text from PDF files and merge PDF documents.", Body: "Use pdftotext.\n"})
	testskill.Add(t, root, "csv-summary", testskill.Skill{Name: "csv-summary", Description: "Summarize CSV files: rows, columns and statistics."})
	testskill.Add(t, root, "git-history", testskill.Skill{Name: "git-history", Description: "Explain a repository's history with git log and blame."})
	e := NewEngine(catalog.New([]string{root}), NewLexical(LexicalOptions{}), DefaultLexicalThreshold, 0)
	set := []Label{
		{Message: "merge these two PDF files", Expect: "pdf-tools", Line: 1},
		{Message: "who changed this line? git blame", Expect: "git-history", Line: 2},
		{Message: "summarize the columns of data.csv", Expect: "pdf-tools", Line: 3}, // wrong on purpose
		{Message: "what is the weather in Paris", Line: 4},
	}
	ev, err := Evaluate(context.Background(), e, set, "set")
	if err != nil {
		t.Fatal(err)
	}
	m := ev.At(DefaultLexicalThreshold)
	if m.OnTopic != 3 || m.OffTopic != 1 || m.Hit1 != 2.0/3 || m.Abstain != 1 {
		t.Fatalf("metrics %+v", m)
	}
	if misses := ev.Misses(DefaultLexicalThreshold); len(misses) != 1 || misses[0].Label.Line != 3 {
		t.Fatalf("misses %+v", misses)
	}
	// At a threshold of 1 nothing matches: all abstain, no hits.
	if m := ev.At(1); m.Hit1 != 0 || m.Abstain != 1 || m.Silent != 1 {
		t.Fatalf("metrics at 1: %+v", m)
	}
	if _, err := Evaluate(context.Background(), e, []Label{{Message: "x", Expect: "nope", Line: 7}}, "set"); err == nil || !strings.Contains(err.Error(), `set:7: "expect" names "nope"`) {
		t.Fatalf("unknown skill: %v", err)
	}
}

func FuzzReadLabels(f *testing.F) {
	f.Add("{\"message\": \"merge PDFs\", \"expect\": \"pdf\"}\n# c\n{\"message\": \"joke\"}\n")
	f.Add("{\"message\": \"\"}")
	f.Add("{\"message\": \"a\", \"expect\": 3}")
	f.Fuzz(func(t *testing.T, in string) {
		set, err := ReadLabels(strings.NewReader(in), "f.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.jsonl") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, l := range set {
			if strings.TrimSpace(l.Message) == "" || l.Line < 1 {
				t.Fatalf("bad label %+v", l)
			}
		}
	})
}
