// Package term makes text from skills safe to show on a terminal. A skill's
// name, description, file names and its scripts' output are the skill
// author's bytes: written raw, escape sequences in them would act on the
// user's terminal (OSC 52 sets the clipboard, OSC 0 the title, CSI 8m hides
// text, CSI 2J clears the screen). Printable is the one place such text is
// made visible instead; JSON output and output to a pipe or file keep the
// exact bytes.
package term

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unprintable reports whether r would act on a terminal rather than show:
// C0 and C1 controls (ESC starts CSI, OSC and DCS sequences), DEL, and the
// bidirectional overrides that reorder what is shown. Tab and newline are
// text.
func Unprintable(r rune) bool {
	if r == '\t' || r == '\n' {
		return false
	}
	return unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// Printable returns s with every unprintable rune (see Unprintable) and
// every byte that is not UTF-8 written as a Go-style escape (\x1b, \u202e,
// \xff), so that "\x1b]52;c;Y3VybA==\x07" shows as `\x1b]52;c;Y3VybA==\x07`
// instead of setting the clipboard. Text without such runes is returned
// unchanged.
func Printable(s string) string {
	if strings.IndexFunc(s, Unprintable) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Unprintable(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unprintable(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Writer passes what is written through Printable. A UTF-8 sequence split
// across two writes is held back until it is whole (or Flush), so chunked
// output shows as the same text as the whole.
type Writer struct {
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer; it reports len(p) written when w took the
// sanitized text.
func (t *Writer) Write(p []byte) (int, error) {
	data := append(t.pending, p...)
	cut := WholeRunes(data)
	t.pending = append([]byte(nil), data[cut:]...)
	if _, err := io.WriteString(t.w, Printable(string(data[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WholeRunes is the length of the longest start of b that does not end
// inside a UTF-8 sequence: a writer of chunked output holds the rest back
// until the next chunk completes it.
func WholeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// Flush writes what was held back.
func (t *Writer) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(t.w, Printable(string(t.pending)))
	t.pending = nil
	return err
}

// IsTerminal reports whether w is a character device (a terminal), where
// skill output must pass Printable; a pipe or a file gets the exact bytes.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
