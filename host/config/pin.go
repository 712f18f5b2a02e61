package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/internal/yamlnode"
)

// WritePins records plugin checksums under plugins.sha256 in the file at
// path, creating the file (and its directory) if needed. The file is edited
// as text where the YAML nodes say the pins go, so the user's formatting,
// order and comments stay exactly as they were; existing pins for other
// plugins stay. Only a file whose plugins or sha256 value is in flow style
// ({...}) is re-rendered as a whole.
func WritePins(path string, sums map[string]string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return &Error{Source: path, Err: err}
	}
	var doc yaml.Node
	if len(data) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return &Error{Source: path, Err: fmt.Errorf("invalid YAML: %w", err)}
		}
	}
	out, ok := editPins(data, &doc, sums)
	if !ok {
		if out, err = renderPins(&doc, sums); err != nil {
			return &Error{Source: path, Err: err}
		}
	}
	return writeAtomically(path, out)
}

// editPins inserts or replaces pins in the text; ok is false when the
// layout is not one it can edit line by line.
func editPins(data []byte, doc *yaml.Node, sums map[string]string) ([]byte, bool) {
	if doc.Kind == 0 || len(doc.Content) == 0 {
		text := string(data)
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		return []byte(text + "plugins:\n  sha256:\n" + pinLines(sums, "    ", nil)), true
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 {
		return nil, false
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += "\n"
	}
	insertAfter := func(line int, text string) { // line is 1-based; 0 inserts at the top
		lines = append(lines[:line], append([]string{text}, lines[line:]...)...)
	}
	pk, plugins := entry(root, "plugins")
	if plugins == nil || yamlnode.IsNull(plugins) && plugins.Line == pk.Line {
		if plugins != nil { // "plugins:" with nothing after it
			insertAfter(pk.Line, "  sha256:\n"+pinLines(sums, "    ", nil))
			return []byte(strings.Join(lines, "")), true
		}
		return []byte(strings.Join(lines, "") + "plugins:\n  sha256:\n" + pinLines(sums, "    ", nil)), true
	}
	if plugins.Kind != yaml.MappingNode || plugins.Style&yaml.FlowStyle != 0 {
		return nil, false
	}
	indent := strings.Repeat(" ", plugins.Column-1)
	sk, pins := entry(plugins, "sha256")
	if pins == nil {
		insertAfter(lastLine(plugins, len(lines)), indent+"sha256:\n"+pinLines(sums, indent+"  ", nil))
		return []byte(strings.Join(lines, "")), true
	}
	if yamlnode.IsNull(pins) && pins.Line == sk.Line {
		insertAfter(sk.Line, pinLines(sums, indent+"  ", nil))
		return []byte(strings.Join(lines, "")), true
	}
	if pins.Kind != yaml.MappingNode || pins.Style&yaml.FlowStyle != 0 || len(pins.Content) == 0 {
		return nil, false
	}
	pinIndent := strings.Repeat(" ", pins.Column-1)
	replaced := map[string]bool{}
	for i := 0; i+1 < len(pins.Content); i += 2 {
		k, v := pins.Content[i], pins.Content[i+1]
		sum, ok := sums[k.Value]
		if !ok {
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Line != k.Line || v.Line > len(lines) {
			return nil, false
		}
		line := lines[v.Line-1]
		start := v.Column - 1
		end := start + len(v.Value)
		if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			end += 2
		}
		if start < 0 || end > len(line) || yamlnode.IsNull(v) && v.Value == "" {
			return nil, false
		}
		lines[v.Line-1] = line[:start] + sum + line[end:]
		replaced[k.Value] = true
	}
	insertAfter(lastLine(pins, len(lines)), pinLines(sums, pinIndent, replaced))
	return []byte(strings.Join(lines, "")), true
}

// entry returns the key and value nodes of key in mapping m.
func entry(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// lastLine is the last line a block node's content occupies.
func lastLine(n *yaml.Node, max int) int {
	last := n.Line
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Line > last {
			last = n.Line
			if n.Kind == yaml.ScalarNode && n.Style&yaml.LiteralStyle|n.Style&yaml.FoldedStyle != 0 {
				last += strings.Count(n.Value, "\n")
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	if last > max {
		last = max
	}
	return last
}

// pinLines renders the pins not in skip, sorted, one per line. Names are
// quoted, so that "null" stays a string.
func pinLines(sums map[string]string, indent string, skip map[string]bool) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		if !skip[name] {
			fmt.Fprintf(&b, "%s%q: %s\n", indent, name, sums[name])
		}
	}
	return b.String()
}

// renderPins is the fallback: the document re-rendered with the pins set.
func renderPins(doc *yaml.Node, sums map[string]string) ([]byte, error) {
	if doc.Kind == 0 {
		*doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("the configuration must be a mapping of sections")
	}
	root.Style = 0
	plugins := child(root, "plugins")
	plugins.Style = 0
	pins := child(plugins, "sha256")
	pins.Style = 0
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		v := child(pins, name)
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: sums[name]}
	}
	return yaml.Marshal(doc)
}

func writeAtomically(path string, out []byte) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &Error{Source: path, Err: err}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return &Error{Source: path, Err: err}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return &Error{Source: path, Err: err}
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return &Error{Source: path, Err: err}
	}
	if err := tmp.Close(); err != nil {
		return &Error{Source: path, Err: err}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return &Error{Source: path, Err: err}
	}
	return nil
}

// child returns the value node under key in mapping m, adding an empty
// mapping if the key is missing or null.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind != yaml.MappingNode {
				*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			return v
		}
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}
