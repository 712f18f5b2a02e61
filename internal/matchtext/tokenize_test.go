package matchtext

import (
	"testing"
)

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"TypeScript on GitHub's API", "for_each don't SEV2 PDFs", "İstanbul’s ÇAĞ_2 x'", "a_ _b '' ’’"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, tm := range Analyze(in, NewMemo(), true) {
			if tm.Text == "" || tm.Weight <= 0 || tm.Weight > 1 {
				t.Fatalf("bad term %+v from %q", tm, in)
			}
			if tm.Whole == "" && tm.Weight == 1 && stopWordSet()[tm.Text] {
				t.Fatalf("stop word %q kept from %q", tm.Text, in)
			}
		}
	})
}

// Headings go to the outline without their #s; a line in a fenced code
// block (a shell comment, say) stays in the body.
func TestSplitMarkdown(t *testing.T) {
	headings, rest := SplitMarkdown("# Merging\nUse qpdf.\n```sh\n# not a heading\n```\n  ## Splitting  \nqpdf --split-pages")
	if want := "Merging\nSplitting\n"; headings != want {
		t.Errorf("headings %q, want %q", headings, want)
	}
	if want := "Use qpdf.\n```sh\n# not a heading\n```\nqpdf --split-pages\n"; rest != want {
		t.Errorf("rest %q, want %q", rest, want)
	}
}
