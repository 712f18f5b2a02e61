package grant

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/internal/yamlnode"
	"github.com/skillhost/skillhost/shared/egress"
)

// FromFrontMatter reads the capability keys of a skill's front matter. It
// never fails: a value it cannot use becomes a warning and the safe default
// (no paths, no network, a 60 s timeout, external trust).
func FromFrontMatter(fields map[string]*yaml.Node) (Declared, []string) {
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	d := Declared{Timeout: DefaultTimeout, Trust: TrustExternal}

	d.FSRead = paths("fs_read", fields["fs_read"], warn)
	d.FSWrite = paths("fs_write", fields["fs_write"], warn)

	if n := fields["network"]; n != nil && !yamlnode.IsNull(n) {
		d.Network, d.Hosts = parseNetwork(n, warn)
	}
	if n := fields["timeout"]; n != nil && !yamlnode.IsNull(n) {
		t, err := parseTimeout(n)
		if err != nil {
			warn("timeout: %v; using %s s", err, Seconds(DefaultTimeout))
		} else {
			d.Timeout = t
		}
	}
	if n := fields["trust"]; n != nil && !yamlnode.IsNull(n) {
		switch v := n.Value; {
		case n.Kind == yaml.ScalarNode && (v == TrustCore || v == TrustExternal):
			d.Trust = v
		default:
			warn("trust: %s is neither core nor external; using external", describe(n))
		}
	}
	return d, warnings
}

func paths(field string, n *yaml.Node, warn func(string, ...any)) []string {
	if n == nil || yamlnode.IsNull(n) {
		return nil
	}
	var items []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{n}
	case yaml.SequenceNode:
		items = n.Content
	default:
		warn("%s: expected a path or a list of paths, got a %s; ignored", field, yamlnode.Kind(n))
		return nil
	}
	var out []string
	for _, it := range items {
		it = yamlnode.Deref(it)
		if it.Kind != yaml.ScalarNode || yamlnode.IsNull(it) {
			warn("%s: entry on line %d is not a path; ignored", field, it.Line)
			continue
		}
		if strings.TrimSpace(it.Value) == "" {
			warn("%s: empty path on line %d; ignored", field, it.Line)
			continue
		}
		out = append(out, it.Value)
	}
	return out
}

// parseBool accepts YAML booleans, 0 and 1, and the strings true/false,
// yes/no, on/off and 1/0 in any case. The strings "false", "no" and "0" are
// false, unlike in the reference implementation, where any string was true.
func parseBool(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode {
		return false, false
	}
	if strings.TrimSpace(n.Value) == "" {
		return false, true
	}
	return BoolWord(n.Value)
}

// BoolWord reads true/yes/on/1 and false/no/off/0, in any case and with
// surrounding blanks; ok is false for anything else.
func BoolWord(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// parseTimeout reads a timeout: a number of seconds (integer or decimal),
// as a YAML number or a string, or a Go duration string such as "90s" or
// "1m30s". It must be positive.
func parseTimeout(n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("expected seconds or a duration, got a %s", yamlnode.Kind(n))
	}
	return ParseSeconds(n.Value)
}

// ParseSeconds reads "30", "0.5", "90s" or "1m30s" as a positive duration.
func ParseSeconds(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f > float64(1<<62)/float64(time.Second) {
			return 0, fmt.Errorf("%q is too long", s)
		}
		d = time.Duration(f * float64(time.Second))
	} else if pd, err := time.ParseDuration(s); err == nil {
		d = pd
	} else {
		return 0, fmt.Errorf("%q is not a number of seconds or a duration like 90s", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not positive", s)
	}
	return d, nil
}

func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return "a " + yamlnode.Kind(n)
}

// parseNetwork reads network: true, false, or host patterns (a list, or
// one as a string). A list keeps its good entries, each bad one a warning;
// a list with none left, or an empty one, is no network.
func parseNetwork(n *yaml.Node, warn func(string, ...any)) (bool, []string) {
	if v, ok := parseBool(n); ok {
		return v, nil
	}
	var items []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		// One host as a string; a word without a dot or port is more
		// likely a mistyped boolean than a host.
		if !strings.ContainsAny(n.Value, ".:") {
			warn("network: %s is not true, false or a list of host names; using false", describe(n))
			return false, nil
		}
		items = []*yaml.Node{n}
	case yaml.SequenceNode:
		items = n.Content
	default:
		warn("network: %s is not true, false or a list of host names; using false", describe(n))
		return false, nil
	}
	hosts := []string{}
	for i, it := range items {
		if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
			warn("network[%d]: %s is not a host name; ignored", i, describe(it))
			continue
		}
		if _, err := egress.ParsePattern(it.Value); err != nil {
			warn("network[%d]: %v; ignored", i, err)
			continue
		}
		hosts = append(hosts, it.Value)
	}
	if len(hosts) == 0 {
		warn("network: no usable host pattern; using false")
		return false, nil
	}
	return true, hosts
}
