package grant

import (
	"reflect"
	"strings"
	"testing"
)

func TestNetworkGrant(t *testing.T) {
	for _, c := range []struct {
		name     string
		d        Declared
		op       Operator
		c        Ceiling
		network  bool
		allow    []string // nil: no Egress
		origins  map[string][]string
		warnings string
	}{
		{name: "both booleans: the whole network, no proxy", d: Declared{Network: true}, c: Ceiling{Network: true}, network: true},
		{name: "ceiling off", d: Declared{Network: true, Hosts: []string{"pypi.org"}}, c: Ceiling{Network: false}},
		{name: "declared off", d: Declared{}, c: Ceiling{Network: true, Hosts: []string{"pypi.org"}}},
		{name: "true with a list ceiling means the list", d: Declared{Network: true},
			c: Ceiling{Network: true, Hosts: []string{"api.anthropic.com", "*.github.com:443"}}, network: true,
			allow:   []string{"api.anthropic.com", "*.github.com:443"},
			origins: map[string][]string{"api.anthropic.com": {"ceiling"}, "*.github.com:443": {"ceiling"}}},
		{name: "a list under a boolean ceiling stays the list", d: Declared{Network: true, Hosts: []string{"pypi.org", "files.pythonhosted.org"}},
			c: Ceiling{Network: true}, network: true, allow: []string{"pypi.org", "files.pythonhosted.org"},
			origins: map[string][]string{"pypi.org": {"skill"}, "files.pythonhosted.org": {"skill"}}},
		{name: "a wildcard narrowed by the ceiling", d: Declared{Network: true, Hosts: []string{"*.github.com"}},
			c: Ceiling{Network: true, Hosts: []string{"api.github.com:443", "pypi.org"}}, network: true, allow: []string{"api.github.com:443"},
			origins: map[string][]string{"api.github.com:443": {"ceiling"}}},
		{name: "the same pattern on both", d: Declared{Network: true, Hosts: []string{"pypi.org"}},
			c: Ceiling{Network: true, Hosts: []string{"pypi.org"}}, network: true, allow: []string{"pypi.org"},
			origins: map[string][]string{"pypi.org": {"skill", "ceiling"}}},
		{name: "nothing in common", d: Declared{Network: true, Hosts: []string{"evil.example"}},
			c: Ceiling{Network: true, Hosts: []string{"pypi.org"}}, warnings: "none of the declared hosts (evil.example)"},
		{name: "a deny under a boolean ceiling needs the proxy", d: Declared{Network: true},
			c: Ceiling{Network: true, Deny: []string{"gist.github.com"}}, network: true, allow: []string{"*"},
			origins: map[string][]string{"*": {"skill", "ceiling"}}},
		{name: "an operator list replaces the skill's", d: Declared{Network: true, Hosts: []string{"pypi.org"}},
			op: Operator{Hosts: []string{"api.github.com"}}, c: Ceiling{Network: true}, network: true, allow: []string{"api.github.com"},
			origins: map[string][]string{"api.github.com": {"operator"}}},
		{name: "an operator list clamped by the ceiling", op: Operator{Hosts: []string{"*.github.com", "evil.example"}},
			c: Ceiling{Network: true, Hosts: []string{"*.github.com"}}, network: true, allow: []string{"*.github.com"},
			origins: map[string][]string{"*.github.com": {"operator", "ceiling"}}},
		{name: "a bad ceiling pattern is dropped with a warning", d: Declared{Network: true},
			c: Ceiling{Network: true, Hosts: []string{"*.com", "pypi.org"}}, network: true, allow: []string{"pypi.org"},
			origins: map[string][]string{"pypi.org": {"ceiling"}}, warnings: `sandbox.network.allow: host pattern "*.com"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ComputeWith("s", c.d, c.op, c.c, Env{Cwd: t.TempDir(), Home: t.TempDir()})
			g, o, w := r.Grant, r.Origins, r.Warnings
			if g.Network != c.network {
				t.Errorf("network %v, want %v", g.Network, c.network)
			}
			switch {
			case c.allow == nil && g.Egress != nil:
				t.Errorf("egress %+v, want none", g.Egress)
			case c.allow != nil && (g.Egress == nil || !reflect.DeepEqual(g.Egress.Allow, c.allow)):
				t.Errorf("egress %+v, want allow %v", g.Egress, c.allow)
			}
			if c.origins != nil && !reflect.DeepEqual(o.Hosts, c.origins) {
				t.Errorf("origins %v, want %v", o.Hosts, c.origins)
			}
			if got := strings.Join(w, "\n"); c.warnings != "" && !strings.Contains(got, c.warnings) || c.warnings == "" && got != "" {
				t.Errorf("warnings %q, want %q", got, c.warnings)
			}
		})
	}
}

func TestEgressCarriesTheCeilingRules(t *testing.T) {
	c := Ceiling{Network: true, Hosts: []string{"*.github.com"}, Deny: []string{"gist.github.com"},
		Reasons: map[string]string{"gist.github.com": "gists are blocked"}, DenyAddresses: []string{"10.0.0.0/8"}}
	g, _ := Compute("s", Declared{Network: true, Hosts: []string{"api.github.com", "gist.github.com"}}, c, Env{})
	e := g.Egress
	if e == nil || !reflect.DeepEqual(e.Allow, []string{"api.github.com", "gist.github.com"}) || !reflect.DeepEqual(e.Deny, c.Deny) ||
		e.Reasons["gist.github.com"] != "gists are blocked" || !reflect.DeepEqual(e.DenyAddresses, c.DenyAddresses) ||
		!reflect.DeepEqual(e.Declared, []string{"api.github.com", "gist.github.com"}) || !reflect.DeepEqual(e.Ceiling, c.Hosts) {
		t.Fatalf("egress %+v", e)
	}
	data, err := g.MarshalJSON()
	if err != nil || !strings.Contains(string(data), `"egress":{"allow":["api.github.com","gist.github.com"],"deny":["gist.github.com"]`) {
		t.Errorf("JSON %s %v", data, err)
	}
}

func TestDeclaredNetwork(t *testing.T) {
	for _, c := range []struct {
		yaml     string
		network  bool
		hosts    []string
		warnings string
	}{
		{"network: true", true, nil, ""},
		{"network: false", false, nil, ""},
		{"network: [pypi.org, '*.github.com:443']", true, []string{"pypi.org", "*.github.com:443"}, ""},
		{"network: api.example.com", true, []string{"api.example.com"}, ""},
		{"network: [pypi.org, '*.com', {a: b}]", true, []string{"pypi.org"}, "network[1]"},
		{"network: []", false, nil, "no usable host pattern"},
		{"network: maybe", false, nil, "not true, false or a list"},
		{"network: {a: b}", false, nil, "not true, false or a list"},
	} {
		d, w := FromFrontMatter(fields(t, c.yaml))
		if d.Network != c.network || !reflect.DeepEqual(d.Hosts, c.hosts) {
			t.Errorf("%s: network %v hosts %q", c.yaml, d.Network, d.Hosts)
		}
		if got := strings.Join(w, "\n"); c.warnings != "" && !strings.Contains(got, c.warnings) || c.warnings == "" && got != "" {
			t.Errorf("%s: warnings %q, want %q", c.yaml, got, c.warnings)
		}
	}
}
