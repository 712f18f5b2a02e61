// Package yamlnode answers the two questions every reader of untrusted
// YAML here asks of a node: what an alias stands for, and whether a value
// is null. The skill parser, the capability reader and the config loader
// share it so that they agree.
package yamlnode

import "go.yaml.in/yaml/v3"

// Deref returns the node an alias stands for, or n itself. One step is
// enough: YAML cannot anchor an alias, so an alias never names another.
func Deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// IsNull reports whether n is a YAML null: null, ~, or nothing at all.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Kind names n's kind for messages: "mapping", "list", "value" (a scalar)
// or "document".
func Kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.DocumentNode:
		return "document"
	}
	return "value"
}
