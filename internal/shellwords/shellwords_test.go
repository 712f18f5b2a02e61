package shellwords

import (
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  error
	}{
		{in: "", want: nil},
		{in: "   \t\n ", want: nil},
		{in: "a b  c", want: []string{"a", "b", "c"}},
		{in: `--name "hello world"`, want: []string{"--name", "hello world"}},
		{in: `'single $HOME' "double $HOME"`, want: []string{"single $HOME", "double $HOME"}},
		{in: `a\ b`, want: []string{"a b"}},
		{in: `"a\"b" 'c\d'`, want: []string{`a"b`, `c\d`}},
		{in: `"keep \n backslash"`, want: []string{`keep \n backslash`}},
		{in: `x''y "" ''`, want: []string{"xy", "", ""}},
		{in: `pre"mid"'post'`, want: []string{"premidpost"}},
		{in: "a\\\nb", want: []string{"ab"}},
		{in: `*.go ~ $(rm -rf /) ; | &`, want: []string{"*.go", "~", "$(rm", "-rf", "/)", ";", "|", "&"}},
		{in: "日本 語", want: []string{"日本", "語"}},
		{in: `'unterminated`, err: ErrUnterminatedSingle},
		{in: `"unterminated`, err: ErrUnterminatedDouble},
		{in: `"ends with \"`, err: ErrUnterminatedDouble},
		{in: `trailing\`, err: ErrTrailingBackslash},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if !errors.Is(err, tt.err) {
			t.Errorf("Split(%q) error = %v, want %v", tt.in, err, tt.err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestAgreesWithBash checks a sample of inputs against the words bash itself
// produces with expansion disabled by quoting rules alone.
func TestAgreesWithBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	for _, in := range []string{`a "b c" d`, `'x y'z`, `"q\"q" r\ s`, `"\$x" '\$y'`, `a\\b "c\\d"`} {
		out, err := exec.Command(bash, "-c", `for w in `+in+`; do printf '%s\0' "$w"; done`).Output()
		if err != nil {
			t.Fatalf("bash: %v", err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		got, err := Split(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, %v; bash gives %q", in, got, err, want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{`a "b c"`, `'x'`, `\`, `"\"`, "a\\\nb", `''""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		total := 0
		for _, w := range words {
			total += len(w)
		}
		if total > len(s) {
			t.Fatalf("words longer than input: %q -> %q", s, words)
		}
		if utf8.ValidString(s) {
			for _, w := range words {
				if !utf8.ValidString(w) {
					t.Fatalf("split a valid UTF-8 input into invalid words: %q -> %q", s, words)
				}
			}
		}
	})
}
