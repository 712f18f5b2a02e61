package skill

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
	"strings"

	"github.com/skillhost/skillhost/host/internal/safeio"
)

// pythonScanLimit bounds how much of a Python file is read to decide
// whether it runs as a program: its __main__ guard is usually last.
const pythonScanLimit = 1 << 20

// pythonRunnable says whether a Python file does something when run as a
// program. It does not when its top level only imports, defines and
// assigns (a library: mcp-builder's connections.py), or when its __main__
// guard only raises or exits with a message (office/validators/*.py:
// "This module should not be run directly"). Top-level statements are told
// apart by indentation, skipping string literals and bracketed
// continuations; a file that cannot be read counts as runnable. head is
// the file's beginning as the scan already read it (nil when it could not
// be read): when it is the whole file, the file is not read again.
func pythonRunnable(path string, head []byte) bool {
	if head != nil && len(head) < headerLimit {
		return runnableSource(head)
	}
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return true
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, pythonScanLimit))
	if err != nil || len(src) == pythonScanLimit {
		return true
	}
	return runnableSource(src)
}

var (
	definition = regexp.MustCompile(`^(import |from \S+ import |def |async def |class |@|__all__|try:|except|finally:|else:|if TYPE_CHECKING|[A-Za-z_][A-Za-z0-9_]*(\s*:[^=]+)?\s*=[^=])`)
	mainGuard  = regexp.MustCompile(`^if\s+__name__\s*==\s*['"]__main__['"]\s*:`)
	refusal    = regexp.MustCompile(`^(raise\b|(sys\.)?exit\(\s*['"])`)
)

// runnableSource is pythonRunnable on the file's text.
func runnableSource(src []byte) bool {
	lines := logicalLines(src)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l.indent > 0 || l.text == "" || strings.HasPrefix(l.text, "#") || l.literal {
			continue
		}
		if mainGuard.MatchString(l.text) {
			// The guard runs something unless its body only refuses.
			for j := i + 1; j < len(lines) && (lines[j].indent > 0 || lines[j].text == ""); j++ {
				if t := lines[j].text; t != "" && !strings.HasPrefix(t, "#") && !lines[j].literal {
					if !refusal.MatchString(t) {
						return true
					}
				}
			}
			continue
		}
		if !definition.MatchString(l.text) {
			return true
		}
	}
	return false
}

// logicalLine is one logical line of Python: its indentation, its text
// (trimmed), and whether it is only a string literal (a docstring).
type logicalLine struct {
	indent  int
	text    string
	literal bool
}

// logicalLines splits src into logical lines, joining the physical lines
// of a bracketed expression or a triple-quoted string.
func logicalLines(src []byte) []logicalLine {
	var out []logicalLine
	var cur strings.Builder
	depth, indent := 0, 0
	inTriple := ""
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), pythonScanLimit)
	for sc.Scan() {
		line := sc.Text()
		if cur.Len() == 0 {
			indent = len(line) - len(strings.TrimLeft(line, " \t"))
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		depth, inTriple = scanLine(line, depth, inTriple)
		if depth > 0 || inTriple != "" || strings.HasSuffix(line, "\\") {
			continue
		}
		text := strings.TrimSpace(cur.String())
		lit := len(text) > 0 && (text[0] == '"' || text[0] == '\'' || strings.HasPrefix(text, `r"`) || strings.HasPrefix(text, `f"`))
		out = append(out, logicalLine{indent: indent, text: text, literal: lit})
		cur.Reset()
	}
	return out
}

// scanLine updates the bracket depth and the open triple quote across one
// physical line, skipping comments and string contents.
func scanLine(line string, depth int, triple string) (int, string) {
	for i := 0; i < len(line); i++ {
		if triple != "" {
			if strings.HasPrefix(line[i:], triple) {
				i += 2
				triple = ""
			}
			continue
		}
		switch c := line[i]; c {
		case '#':
			return depth, triple
		case '"', '\'':
			q := string([]byte{c, c, c})
			if strings.HasPrefix(line[i:], q) {
				triple = q
				i += 2
				continue
			}
			for i++; i < len(line) && line[i] != c; i++ {
				if line[i] == '\\' {
					i++
				}
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return depth, triple
}
