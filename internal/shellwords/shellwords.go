// Package shellwords splits a command-line string into words the way a POSIX
// shell does, without any expansion: quotes and backslashes are honoured,
// while $, `, *, ~ and friends are plain characters.
package shellwords

import (
	"errors"
	"strings"
)

// Errors for input a shell would not accept as complete.
var (
	ErrUnterminatedSingle = errors.New("unterminated single quote")
	ErrUnterminatedDouble = errors.New("unterminated double quote")
	ErrTrailingBackslash  = errors.New("trailing backslash")
)

// Split returns the words of s. Outside quotes, blanks and newlines separate
// words and a backslash takes the next character literally (a
// backslash-newline is removed). Inside single quotes every character is
// literal. Inside double quotes a backslash escapes only $ ` " \ and
// newline. Adjacent quoted and unquoted parts join into one word, and an
// empty pair of quotes is an empty word.
func Split(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			flush()
		case '\\':
			if i+1 >= len(s) {
				return nil, ErrTrailingBackslash
			}
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
				inWord = true
			}
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, ErrUnterminatedSingle
			}
			cur.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] != '\n' {
						cur.WriteByte(s[i])
					}
					continue
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, ErrUnterminatedDouble
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, nil
}
