package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/internal/yamlnode"
)

// PluginConfig is one sandbox plugin's own settings, the mapping under
// plugins.config.<name>. skillhost never interprets it: it hands the
// document to the plugin (as JSON), which validates it and names what is
// wrong. The zero value is "no settings".
type PluginConfig struct {
	node *yaml.Node
}

// UnmarshalYAML implements yaml.Unmarshaler: the value must be a mapping
// (or null, for none).
func (p *PluginConfig) UnmarshalYAML(n *yaml.Node) error {
	if d := yamlnode.Deref(n); d.Kind != yaml.MappingNode && !yamlnode.IsNull(d) {
		return lineError(n, fmt.Errorf("expected a mapping of the plugin's settings, not a %s", yamlnode.Kind(d)))
	}
	p.node = n
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (p PluginConfig) MarshalYAML() (any, error) {
	if p.node == nil {
		return map[string]any{}, nil
	}
	return p.node, nil
}

// MarshalJSON implements json.Marshaler, as JSON returns.
func (p PluginConfig) MarshalJSON() ([]byte, error) { return p.JSON() }

// JSON returns the settings as a JSON object, "{}" when there are none.
// It fails on YAML that has no JSON form (a non-string key, an infinite
// number), which Validate reports.
func (p PluginConfig) JSON() ([]byte, error) {
	if p.node == nil || yamlnode.IsNull(yamlnode.Deref(p.node)) {
		return []byte("{}"), nil
	}
	var v any
	if err := p.node.Decode(&v); err != nil {
		return nil, err
	}
	if err := jsonable(v, ""); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Empty reports whether no settings were written.
func (p PluginConfig) Empty() bool {
	n := p.node
	if n != nil {
		n = yamlnode.Deref(n)
	}
	return n == nil || yamlnode.IsNull(n) || len(n.Content) == 0
}

// jsonable finds the first value of v with no JSON form, naming its key.
func jsonable(v any, key string) error {
	at := func(k string) string {
		if key == "" {
			return k
		}
		return key + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if err := jsonable(e, at(k)); err != nil {
				return err
			}
		}
	case map[any]any:
		for k := range v {
			if _, ok := k.(string); !ok {
				return fmt.Errorf("%s: the key is not a string; plugin settings must be expressible in JSON", at(fmt.Sprint(k)))
			}
		}
	case []any:
		for i, e := range v {
			if err := jsonable(e, at(fmt.Sprint(i))); err != nil {
				return err
			}
		}
	case float64:
		if _, err := json.Marshal(v); err != nil {
			return fmt.Errorf("%s: %v has no JSON form", key, v)
		}
	}
	return nil
}

// set puts value (parsed as YAML) at the dotted path keys inside the
// settings, for an environment override.
func (p *PluginConfig) set(keys []string, value string) error {
	if p.node == nil || yamlnode.IsNull(p.node) {
		p.node = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	var doc yaml.Node
	leaf := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
	if err := yaml.Unmarshal([]byte(value), &doc); err == nil && len(doc.Content) > 0 {
		leaf = doc.Content[0]
		clearLines(leaf)
	}
	n := yamlnode.Deref(p.node)
	for i, k := range keys {
		if n.Kind != yaml.MappingNode {
			return errors.New(strings.Join(keys[:i], ".") + " is not a mapping")
		}
		next := valueOf(n, k)
		if i == len(keys)-1 {
			if next != nil {
				*next = *leaf
			} else {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, leaf)
			}
			return nil
		}
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, next)
		}
		n = yamlnode.Deref(next)
	}
	return nil
}

// moved are sections that became a plugin's own settings. Each still works
// for now, with a deprecation warning, and is read as if written under its
// new place (settings already written there win).
var moved = []struct {
	old    []string // path of the old section
	plugin string   // its plugins.config.<plugin>
}{
	// Until contract SetConfig, the host carried this plugin's one setting.
	{old: []string{"sandbox", "landlock"}, plugin: "landlock"},
}

// moveDeprecated rewrites the old sections of root into plugins.config and
// returns a warning for each.
func moveDeprecated(root *yaml.Node) []string {
	var warnings []string
	for _, m := range moved {
		parent := lookup(root, m.old[:len(m.old)-1]...)
		if parent == nil || parent.Kind != yaml.MappingNode {
			continue
		}
		last := m.old[len(m.old)-1]
		for i := 0; i+1 < len(parent.Content); i += 2 {
			if parent.Content[i].Value != last {
				continue
			}
			key, val := parent.Content[i], parent.Content[i+1]
			parent.Content = append(parent.Content[:i:i], parent.Content[i+2:]...)
			warnings = append(warnings, fmt.Sprintf("line %d: %s is deprecated; write its settings under plugins.config.%s",
				key.Line, strings.Join(m.old, "."), m.plugin))
			mergeInto(ensure(root, "plugins", "config", m.plugin), yamlnode.Deref(val))
			break
		}
	}
	return warnings
}

// ensure returns the mapping at keys under root, creating empty ones.
func ensure(root *yaml.Node, keys ...string) *yaml.Node {
	n := root
	for _, k := range keys {
		next := valueOf(n, k)
		if next == nil || yamlnode.IsNull(next) {
			fresh := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if next != nil {
				*next = *fresh
			} else {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, fresh)
				next = fresh
			}
		}
		n = yamlnode.Deref(next)
		if n.Kind != yaml.MappingNode {
			return &yaml.Node{Kind: yaml.MappingNode} // not a mapping: decoding reports it
		}
	}
	return n
}

// mergeInto adds the entries of from that into lacks.
func mergeInto(into, from *yaml.Node) {
	if from.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(from.Content); i += 2 {
		if lookup(into, from.Content[i].Value) == nil {
			into.Content = append(into.Content, from.Content[i], from.Content[i+1])
		}
	}
}
