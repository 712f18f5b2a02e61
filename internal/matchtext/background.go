package matchtext

import (
	_ "embed"
	"hash/fnv"
	"strings"
	"sync"
)

//go:embed background.txt
var builtinBackground string

// DefaultBackground returns the background messages built into the
// binary: 1,990 of the 7,840 messages of tools/matchlab/tune written for
// 1,960 published skills (a quarter, picked by a hash of their text), none
// of them for the skills of the labelled sets the defaults were chosen
// on. tools/matchlab background writes the file from those messages.
var DefaultBackground = sync.OnceValue(func() []string {
	var out []string
	for line := range strings.Lines(builtinBackground) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
})

// WriteBackground writes messages in the form DefaultBackground reads: a
// comment line, then one message per line, its white space runs made one
// space. An empty message, or one that starts with "#" (it would read as
// a comment), is left out; none of the built-in messages is.
func WriteBackground(messages []string) string {
	var b strings.Builder
	b.WriteString("# skillhost background messages for the breadth factor: one per line\n")
	for _, m := range messages {
		if m = oneLine(m); m != "" && !strings.HasPrefix(m, "#") {
			b.WriteString(m)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// InBackground reports whether a message written for a skill belongs to
// the background: a quarter of such messages, those whose FNV-1a hash (of
// the message with its white space runs made one space) is 0 modulo 4.
// The hash picks them without looking at what they give. The other three
// quarters are the requests lent to skills (DefaultExamples).
func InBackground(message string) bool {
	h := fnv.New32a()
	h.Write([]byte(oneLine(message)))
	return h.Sum32()%4 == 0
}

// oneLine makes every white space run of s one space, and trims it.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
