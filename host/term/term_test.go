package term

import (
	"bytes"
	"testing"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\tindented":                       "plain text\n\tindented",
		"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07":           `\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07`,
		"\x1b]0;PWNED\x07title":                        `\x1b]0;PWNED\x07title`,
		"\x1b[8mhidden\x1b[0m":                         `\x1b[8mhidden\x1b[0m`,
		"\x1bP1$r\x1b\\ dcs":                           `\x1bP1$r\x1b\ dcs`,
		"\u009b2J c1 csi":                              `\x9b2J c1 csi`,
		"x\x1b]0;PWNED\x07\x1b[2J.sh":                  `x\x1b]0;PWNED\x07\x1b[2J.sh`,
		"right-to-left \u202e override, bad \xff byte": `right-to-left \u202e override, bad \xff byte`,
		"carriage\rreturn":                             `carriage\x0dreturn`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// Output cut anywhere, even inside a UTF-8 sequence or an escape, shows as
// the whole would.
func TestWriterChunks(t *testing.T) {
	in := []byte("héllo \x1b]52;c;ZXZpbA==\x07 wörld ✓\n")
	want := Printable(string(in))
	for cut := 0; cut <= len(in); cut++ {
		var b bytes.Buffer
		w := NewWriter(&b)
		w.Write(in[:cut])
		w.Write(in[cut:])
		w.Flush()
		if b.String() != want {
			t.Errorf("cut at %d: %q, want %q", cut, b.String(), want)
		}
	}
}
