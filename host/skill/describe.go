package skill

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// maxDescription bounds a tool description (OpenAI's limit for a function
// description is 1024 characters).
const maxDescription = 1024

// Describe returns a script's description from the beginning of its text.
// What the script does comes from, in order of preference, a Python module
// docstring, an argparse description=, or the first header comment (never
// one that explains a shell option, like # Exit on error above set -e). A
// --help-style usage line ("usage: x.py IN OUT") is appended to it, since it
// tells an agent how to call the tool, or stands alone when nothing else
// describes the script; a shell script's first echo is the last resort. It
// returns "" when none is found.
func Describe(head []byte, file string) string {
	lower := strings.ToLower(file)
	desc := ""
	if strings.HasSuffix(lower, ".py") || pythonShebang(head) {
		desc = docstring(head)
	}
	if desc == "" {
		desc = argparseDescription(head)
	}
	if desc == "" {
		desc = headerComment(head)
	}
	usage := usageLine(head)
	switch {
	case usage != "" && desc == "":
		return usage
	case usage != "" && !strings.Contains(strings.ToLower(desc), "usage"):
		if !strings.HasSuffix(desc, ".") {
			desc += "."
		}
		return clipDescription(desc + " " + usage)
	case desc != "":
		return desc
	}
	if strings.HasSuffix(lower, ".sh") || strings.HasSuffix(lower, ".bash") {
		return banner(head)
	}
	return ""
}

// bannerRe finds a shell script's first message, which real scripts use
// to announce what they do: echo "📦 Bundling the app...".
var bannerRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*echo[ \t]+(?:-e[ \t]+)?["']([^"'$\n]{8,})["']`)
})

// banner returns the first echo of a shell script, without decoration, as
// a last resort.
func banner(head []byte) string {
	m := bannerRe().FindSubmatch(head)
	if m == nil {
		return ""
	}
	return strings.TrimRight(clipDescription(string(m[1])), ".… ")
}

func pythonShebang(head []byte) bool {
	interp, _ := Shebang(head)
	return len(interp) > 0 && strings.Contains(strings.Join(interp, " "), "python")
}

// docstring returns the first paragraph of a Python module docstring: the
// first statement, after the shebang, comments and blank lines.
func docstring(head []byte) string {
	text := string(bytes.TrimPrefix(head, []byte("\ufeff")))
	for text != "" {
		line, rest, _ := strings.Cut(text, "\n")
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			text = rest
			continue
		}
		break
	}
	text = strings.TrimLeft(text, " \t")
	if len(text) > 0 && strings.ContainsRune("rRuU", rune(text[0])) {
		text = text[1:]
	}
	var body string
	switch {
	case strings.HasPrefix(text, `"""`), strings.HasPrefix(text, `'''`):
		q := text[:3]
		end := strings.Index(text[3:], q)
		if end < 0 {
			return ""
		}
		body = text[3 : 3+end]
	case strings.HasPrefix(text, `"`), strings.HasPrefix(text, `'`):
		q := text[:1]
		line, _, _ := strings.Cut(text[1:], "\n")
		end := strings.Index(line, q)
		if end < 0 {
			return ""
		}
		body = line[:end]
	default:
		return ""
	}
	return firstParagraph(body)
}

// firstParagraph joins the lines of text up to its first blank line.
func firstParagraph(text string) string {
	var words []string
	started := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			if started {
				break
			}
			continue
		}
		started = true
		words = append(words, strings.Fields(t)...)
	}
	return clipDescription(strings.Join(words, " "))
}

var (
	argparseRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)ArgumentParser\([^)]*?\bdescription\s*=\s*[rRuUfF]?("""|'''|"|')(.*?)("""|'''|"|')`)
	})
	// usageRe wants "usage:" at the start of a line or comment, or at the
	// start of a string literal (after a few symbols: "❌ Usage: ..."), so
	// "# Memory usage: high" is not a usage line.
	usageRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?im)(?:^[\t #]*|["'][^\w\n"']{0,8})usage:[ \t]*([^\n"'` + "`" + `]*)`)
	})
)

// argparseDescription finds argparse.ArgumentParser(description="...").
func argparseDescription(head []byte) string {
	if !bytes.Contains(head, []byte("ArgumentParser(")) {
		return "" // what the expression needs first; most scripts lack it
	}
	m := argparseRe().FindSubmatch(head)
	if m == nil || string(m[1]) != string(m[3]) {
		return ""
	}
	return firstParagraph(string(m[2]))
}

// usageLine finds the first "usage: ..." text (from a --help message, a
// print or an echo) and returns it as "Usage: ...".
func usageLine(head []byte) string {
	if !mayContainFold(head, "usage:") {
		return ""
	}
	for _, m := range usageRe().FindAllSubmatch(head, 8) {
		if rest := strings.TrimSpace(string(m[1])); len(rest) > 2 {
			return clipDescription("Usage: " + rest)
		}
	}
	return ""
}

// mayContainFold reports whether b may hold word (lower-case ASCII) in any
// case: a quick test before a case-insensitive expression, which most
// script headers fail. Text with non-ASCII bytes always may, since Unicode
// case folding maps some of them onto ASCII letters (ſ onto s).
func mayContainFold(b []byte, word string) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	for i := 0; i+len(word) <= len(b); i++ {
		j := 0
		for j < len(word) && b[i+j]|0x20 == word[j]|0x20 {
			j++
		}
		if j == len(word) {
			return true
		}
	}
	return false
}

// setRe matches a shell line that sets options: set -e, set -euo pipefail,
// set -o errexit.
var setRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^set\s+[-+][a-zA-Z]`) })

// optionWords mark a comment as an explanation of a shell option.
var optionWords = []string{"exit", "error", "fail", "unset", "pipe", "strict", "abort", "undefined", "trace", "debug", "bail"}

// headerComment returns the first comment of the file's leading comment
// block that is not a shebang, an editor or linter directive, or the
// explanation of a shell option just above a set line. Only the leading
// block is read, so a comment deep in the code never becomes the
// description; a set line ends the header too.
func headerComment(head []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Buffer(make([]byte, 4096), headerLimit)
	pending := ""     // a comment waiting to see whether a set line follows
	adjacent := false // pending is directly above the current line
	first := true
	inBlock := false
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if first {
			first = false
			if strings.HasPrefix(line, "#!") {
				continue
			}
		}
		if inBlock {
			if i := strings.Index(line, "*/"); i >= 0 {
				inBlock = false
				line = line[:i]
			}
			text := strings.TrimSpace(strings.TrimLeft(line, "*"))
			if pending == "" && text != "" && !isDirective(text) && !strings.HasPrefix(text, "@") {
				pending = text
			}
			continue
		}
		if line == "" {
			adjacent = false
			continue
		}
		if strings.HasPrefix(line, "/*") {
			text := strings.TrimSpace(strings.TrimLeft(line, "/*"))
			if i := strings.Index(text, "*/"); i >= 0 {
				text = strings.TrimSpace(text[:i])
			} else {
				inBlock = true
			}
			if pending == "" && text != "" && !isDirective(text) {
				pending = text
			}
			continue
		}
		if setRe().MatchString(line) {
			if adjacent && explainsOption(pending) {
				pending = ""
			}
			return clipDescription(pending) // code follows: a later comment is about it
		}
		text, ok := commentText(line)
		if !ok {
			break // end of the header
		}
		if pending != "" {
			return clipDescription(pending)
		}
		if text != "" && !isDirective(text) {
			pending, adjacent = text, true
		}
	}
	return clipDescription(pending)
}

func explainsOption(comment string) bool {
	lower := strings.ToLower(comment)
	for _, w := range optionWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

func commentText(line string) (string, bool) {
	switch {
	case strings.HasPrefix(line, "#!"):
		return "", true
	case strings.HasPrefix(line, "#"):
		return strings.TrimSpace(strings.TrimLeft(line, "#")), true
	case strings.HasPrefix(line, "//"):
		return strings.TrimSpace(strings.TrimLeft(line, "/")), true
	}
	return "", false
}

// isDirective recognises comment lines meant for tools, not readers.
func isDirective(text string) bool {
	lower := strings.ToLower(text)
	return strings.HasPrefix(lower, "-*-") || strings.HasPrefix(lower, "shellcheck ") ||
		strings.HasPrefix(lower, "vim:") || strings.HasPrefix(lower, "coding:") ||
		strings.HasPrefix(lower, "coding=") || strings.HasPrefix(lower, "eslint") ||
		strings.HasPrefix(lower, "@ts-") || strings.HasPrefix(lower, "/ <reference") ||
		strings.HasPrefix(lower, "type:") || strings.HasPrefix(lower, "noqa") ||
		strings.HasPrefix(lower, "pylint:") || strings.HasPrefix(lower, "/// script") ||
		strings.HasPrefix(lower, "requires-python") || strings.HasPrefix(lower, "dependencies")
}

// clipDescription trims text, drops leading symbols (emoji, bullets) and
// bounds its length.
func clipDescription(text string) string {
	text = strings.TrimLeftFunc(strings.TrimSpace(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '(' && r != '[' && r != '<' && r != '.'
	})
	if r := []rune(text); len(r) > maxDescription {
		text = string(r[:maxDescription-1]) + "…"
	}
	return text
}
