package skill

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/internal/yamlnode"
)

// Front-matter errors. They are wrapped with the file they came from.
var (
	ErrNoFrontMatter = errors.New("no YAML front matter: the first line must be ---")
	ErrUnclosed      = errors.New("front matter is not closed by a --- line")
	ErrNotUTF8       = errors.New("not valid UTF-8")
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// document is a SKILL.md split into its parts.
type document struct {
	yaml      string // front matter text, LF line endings
	yamlLine  int    // file line number of the first front-matter line
	body      string // everything after the closing delimiter
	repaired  []int  // file lines whose unquoted value was quoted to parse
	keyOrder  []string
	keyNodes  map[string]*yaml.Node
	valueNode map[string]*yaml.Node
}

// splitDocument separates front matter from body. It accepts what real
// skills contain: a UTF-8 BOM, CRLF or CR line endings, blank lines before
// the opening delimiter, and trailing blanks on either delimiter. The
// closing delimiter is the first later line that is exactly "---" (plus
// blanks); a "---" inside a value, or a horizontal rule in the body, is
// never a delimiter, because a YAML scalar cannot hold such a line at
// column 0.
func splitDocument(data []byte) (*document, error) {
	if !utf8.Valid(data) {
		return nil, ErrNotUTF8
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.SplitAfter(text, "\n")

	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || !isDelimiter(lines[i]) {
		return nil, ErrNoFrontMatter
	}
	open := i
	for j := open + 1; j < len(lines); j++ {
		if isDelimiter(lines[j]) {
			return &document{
				yaml:     strings.Join(lines[open+1:j], ""),
				yamlLine: open + 2,
				body:     strings.Join(lines[j+1:], ""),
			}, nil
		}
	}
	return nil, ErrUnclosed
}

func isDelimiter(line string) bool {
	return strings.TrimRight(line, " \t\n") == "---"
}

// parseYAML decodes the front matter into a mapping. A value holding an
// unquoted ": " (invalid YAML that real skills contain) is retried once as a
// quoted string, and the repaired lines are recorded.
func (d *document) parseYAML() error {
	root, err := decodeMapping(d.yaml)
	if err != nil {
		fixed, lines := quoteColonValues(d.yaml)
		if len(lines) == 0 {
			return d.yamlError(err)
		}
		root2, err2 := decodeMapping(fixed)
		if err2 != nil {
			return d.yamlError(err)
		}
		root = root2
		for _, l := range lines {
			d.repaired = append(d.repaired, l+d.yamlLine-1)
		}
	}
	d.keyNodes = map[string]*yaml.Node{}
	d.valueNode = map[string]*yaml.Node{}
	for k := 0; k+1 < len(root.Content); k += 2 {
		key, val := root.Content[k], root.Content[k+1]
		name := key.Value
		if prev, dup := d.keyNodes[name]; dup {
			return fmt.Errorf("duplicate key '%s' (lines %d and %d)", name, prev.Line+d.yamlLine-1, key.Line+d.yamlLine-1)
		}
		d.keyOrder = append(d.keyOrder, name)
		d.keyNodes[name] = key
		d.valueNode[name] = yamlnode.Deref(val)
	}
	return nil
}

func decodeMapping(text string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode}, nil // empty front matter
	}
	root := yamlnode.Deref(doc.Content[0])
	if yamlnode.IsNull(root) {
		return &yaml.Node{Kind: yaml.MappingNode}, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("front matter must be a mapping of keys to values, not a %s", yamlnode.Kind(root))
	}
	return root, nil
}

var yamlLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// yamlParserErrors are the YAML library's parser (not scanner) messages: it
// numbers their lines from 0 (the line a construct started on, or the
// problem's), and leaves the number out for the first line.
var yamlParserErrors = []string{
	"did not find expected key", "did not find expected node content", "did not find expected '-' indicator",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected <document start>",
}

// yamlError rewrites the YAML library's line numbers, which count from the
// start of the front matter, into line numbers of the file.
func (d *document) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	offset := d.yamlLine - 1
	for _, pe := range yamlParserErrors {
		if strings.HasSuffix(msg, pe) {
			offset++
			if !yamlLineRe().MatchString(msg) {
				msg = "line 0: " + msg
			}
			break
		}
	}
	msg = yamlLineRe().ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		return "line " + strconv.Itoa(n+offset)
	})
	return fmt.Errorf("invalid YAML front matter: %s", msg)
}

var colonValueRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_-]+):[ \t]+(.*: .*)$`) })

// quoteColonValues quotes top-level plain values that contain ": ", the most
// common invalid YAML in published skills ("description: Use when: ..."). It
// returns the repaired text and the 1-based lines it changed.
func quoteColonValues(text string) (string, []int) {
	lines := strings.Split(text, "\n")
	var changed []int
	for i, l := range lines {
		m := colonValueRe().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[2])
		if v == "" || strings.ContainsAny(v[:1], `"'[{|>&*!%@`+"`") {
			continue
		}
		lines[i] = m[1] + ": " + strconv.Quote(v)
		changed = append(changed, i+1)
	}
	return strings.Join(lines, "\n"), changed
}
