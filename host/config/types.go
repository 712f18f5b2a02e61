package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared/egress"
)

// Duration reads a number of seconds (30, 0.5) or a duration string
// ("90s", "1m30s").
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return lineError(n, fmt.Errorf("expected seconds or a duration like 90s"))
	}
	v, err := grant.ParseSeconds(n.Value)
	if err != nil {
		return lineError(n, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON renders seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(grant.Seconds(time.Duration(d))), nil
}

// ByteSize reads a byte count: a plain number, or one with a unit: K, M, G
// (or KiB, MiB, GiB) count in powers of 1024, KB, MB, GB in powers of 1000.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
}

// ParseByteSize parses s as a ByteSize.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size like 1048576, 64KiB or 1MiB", s)
	}
	return ByteSize(f * float64(mult)), nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return lineError(n, fmt.Errorf("expected a size like 1MiB"))
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return lineError(n, err)
	}
	*b = v
	return nil
}

// MarshalJSON renders bytes.
func (b ByteSize) MarshalJSON() ([]byte, error) { return json.Marshal(int64(b)) }

// Strategy names a sandbox plugin or "auto".
type Strategy string

// UnmarshalYAML implements yaml.Unmarshaler. A YAML null never reaches it
// (the decoder zeroes the field instead); checkNulls reports that case.
func (s *Strategy) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return lineError(n, fmt.Errorf("expected a plugin name or auto"))
	}
	*s = Strategy(n.Value)
	return nil
}

// List is a list of strings that may also be written as one scalar
// (interpreters: auto).
type List []string

// UnmarshalYAML implements yaml.Unmarshaler.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = List{n.Value}
		return nil
	case yaml.SequenceNode:
		var items []string
		if err := n.Decode(&items); err != nil {
			return err
		}
		*l = items
		return nil
	}
	return lineError(n, fmt.Errorf("expected a list of paths, or auto"))
}

// lineError prefixes err with n's line, as YAML's own errors are, so that
// the loader can name the key too. Nodes built from environment variables
// have no line.
func lineError(n *yaml.Node, err error) error {
	if n.Line == 0 {
		return err
	}
	return fmt.Errorf("line %d: %w", n.Line, err)
}

// Hosts is a network: value as the configuration writes it: true, false,
// or host patterns (a list, or one string of comma-separated patterns, as
// an environment variable gives it).
type Hosts struct {
	On bool
	// List, when not nil, narrows On to these patterns.
	List []string
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (h *Hosts) UnmarshalYAML(n *yaml.Node) error {
	var list []string
	switch n.Kind {
	case yaml.ScalarNode:
		if b, ok := grant.BoolWord(n.Value); ok {
			h.On, h.List = b, nil
			return nil
		}
		if !strings.ContainsAny(n.Value, ".:,*") {
			// A word without a dot is more likely a mistyped boolean
			// than a host.
			return lineError(n, fmt.Errorf("%q is not true, false or a list of host patterns", n.Value))
		}
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
	case yaml.SequenceNode:
		if err := n.Decode(&list); err != nil {
			return lineError(n, fmt.Errorf("expected host patterns: %w", cleanDecodeError(err)))
		}
	default:
		return lineError(n, fmt.Errorf("expected true, false or a list of host patterns"))
	}
	for _, s := range list {
		if _, err := egress.ParsePattern(s); err != nil {
			return lineError(n, err)
		}
	}
	h.On, h.List = len(list) > 0, append([]string{}, list...)
	return nil
}

// MarshalYAML writes the value back as true, false or the list.
func (h Hosts) MarshalYAML() (any, error) {
	if h.List != nil {
		return h.List, nil
	}
	return h.On, nil
}

// NetworkCeiling is sandbox.network: which hosts any skill may reach.
// Written as a boolean or a list it is Allow alone.
type NetworkCeiling struct {
	// Allow is true (any host), false (none) or the host patterns a
	// skill's declaration is intersected with.
	Allow Hosts `yaml:"allow"`
	// Deny are host patterns no skill reaches, whatever it declares;
	// they win over Allow.
	Deny []string `yaml:"deny"`
	// Reasons are shown to a script refused a host, by pattern.
	Reasons map[string]string `yaml:"reasons"`
	// DenyAddresses are address ranges (CIDR) an allowed name may not
	// resolve to, besides loopback, link-local, metadata endpoints and the
	// host's own addresses, which are always refused.
	DenyAddresses []string `yaml:"deny_addresses"`
	// Fallback is what happens when the strategy cannot enforce a list of
	// hosts: "refuse" (the default) fails the run; "all" runs it with the
	// whole network, listed in the result as not enforced.
	Fallback string `yaml:"fallback"`
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (c *NetworkCeiling) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return c.Allow.UnmarshalYAML(n)
	}
	type plain NetworkCeiling
	p := plain(*c)
	if err := n.Decode(&p); err != nil {
		return err
	}
	*c = NetworkCeiling(p)
	return nil
}

// Credential is a secret the egress proxy puts into requests to one host,
// read by the host from its environment and never passed into a run.
type Credential struct {
	Host string `yaml:"host"`
	// Header gets Prefix and the secret ("Authorization" with "Bearer ",
	// or "x-api-key" alone).
	Header string `yaml:"header"`
	Prefix string `yaml:"prefix"`
	// FromEnv names the host's variable that holds the secret.
	FromEnv string `yaml:"from_env"`
	// PlaceholderEnv names the run's variable that holds Placeholder
	// (default "skillhost-placeholder"), for clients that want a key set.
	PlaceholderEnv string `yaml:"placeholder_env"`
	Placeholder    string `yaml:"placeholder"`
}
