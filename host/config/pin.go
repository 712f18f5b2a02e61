package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
)

// WritePins records plugin checksums under plugins.sha256 in the file at
// path, creating the file (and its directory) if needed. Other content and
// comments are kept; existing pins for other plugins stay.
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
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return &Error{Source: path, Err: errors.New("the configuration must be a mapping of sections")}
	}
	plugins := child(root, "plugins")
	pins := child(plugins, "sha256")
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		v := child(pins, name)
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: sums[name]}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
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
