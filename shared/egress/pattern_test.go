package egress

import (
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

func TestParsePattern(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"api.example.com", "api.example.com", ""},
		{"API.Example.COM.", "api.example.com", ""},
		{"*.github.com:443", "*.github.com:443", ""},
		{"127.0.0.2:8080", "127.0.0.2:8080", ""},
		{"[::1]:443", "[::1]:443", ""},
		{"[2001:db8::1]", "[2001:db8::1]", ""},
		{"::1", "", "in brackets"},
		{"*", "*", ""},
		{"*:443", "*:443", ""},
		{"*:", "", "empty port"},
		{"*.com", "", "two labels"},
		{"a.*.com", "", "character"},
		{"api.example.com:0", "", "port"},
		{"api.example.com:99999", "", "port"},
		{"api.example.com:", "", "empty port"},
		{"exa mple.com", "", "character"},
		{"[::1", "", "closing"},
		{"[1.2.3.4]", "", "not an IPv6"},
		{strings.Repeat("a", 64) + ".com", "", "long label"},
	} {
		p, err := ParsePattern(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParsePattern(%q) = %v, %v; want an error saying %q", c.in, p, err, c.err)
		case c.err == "" && (err != nil || p.String() != c.want):
			t.Errorf("ParsePattern(%q) = %q, %v; want %q", c.in, p.String(), err, c.want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, host string
		port          int
		want          bool
	}{
		{"api.example.com", "API.example.com", 443, true},
		{"api.example.com", "api.example.com.", 80, true},
		{"api.example.com", "xapi.example.com", 443, false},
		{"*.example.com", "a.b.example.com", 443, true},
		{"*.example.com", "example.com", 443, false},
		{"*.example.com", "badexample.com", 443, false},
		{"api.example.com:443", "api.example.com", 80, false},
		{"127.0.0.2:8080", "127.0.0.2", 8080, true},
		{"127.0.0.2:8080", "::ffff:127.0.0.2", 8080, true},
		{"127.0.0.2", "127.0.0.3", 8080, false},
		{"[::1]", "::1", 1, true},
		{"api.example.com", "1.2.3.4", 443, false},
		{"*", "anything.example", 1, true},
		{"*:443", "1.2.3.4", 80, false},
	} {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(c.host, c.port); got != c.want {
			t.Errorf("%s matches %s:%d = %v, want %v", c.pattern, c.host, c.port, got, c.want)
		}
	}
}

func TestIntersect(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"*.github.com", "api.github.com", "api.github.com"},
		{"api.github.com", "*.github.com:443", "api.github.com:443"},
		{"*.github.com", "*.github.com", "*.github.com"},
		{"*.api.github.com", "*.github.com", "*.api.github.com"},
		{"*.github.com", "*.api.github.com", "*.api.github.com"},
		{"*.github.com", "github.com", ""},
		{"api.github.com:443", "api.github.com:80", ""},
		{"api.github.com", "api.gitlab.com", ""},
		{"*.github.com", "*.gitlab.com", ""},
		{"127.0.0.2", "127.0.0.2:8080", "127.0.0.2:8080"},
		{"127.0.0.2", "*.example.com", ""},
		{"pypi.org", "pypi.org", "pypi.org"},
		{"*", "*.github.com:443", "*.github.com:443"},
		{"api.github.com", "*:443", "api.github.com:443"},
	} {
		a, _ := ParsePattern(c.a)
		b, _ := ParsePattern(c.b)
		got, ok := Intersect(a, b)
		if s := got.String(); ok != (c.want != "") || ok && s != c.want {
			t.Errorf("%s ∩ %s = %q, %v; want %q", c.a, c.b, s, ok, c.want)
		}
	}
}

func TestDecide(t *testing.T) {
	p, err := NewPolicy(&shared.Egress{
		Allow:    []string{"api.github.com", "*.example.com:443"},
		Deny:     []string{"gist.example.com", "bad.example.com"},
		Reasons:  map[string]string{"gist.example.com": "gists are blocked; use the repository"},
		Declared: []string{"*.github.com"}, Ceiling: []string{"api.github.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host   string
		port   int
		ok     bool
		reason string
	}{
		{"api.github.com", 443, true, ""},
		{"a.example.com", 443, true, ""},
		{"a.example.com", 80, false, "the skill declares *.github.com; the ceiling allows api.github.com"},
		{"gist.example.com", 443, false, "gists are blocked; use the repository"},
		{"bad.example.com", 443, false, "denied by the operator (sandbox.network.deny: bad.example.com)"},
		{"evil.com", 443, false, "evil.com:443 is not in the allowed domains"},
	} {
		ok, why := p.Decide(c.host, c.port)
		if ok != c.ok || !strings.Contains(why, c.reason) {
			t.Errorf("Decide(%s, %d) = %v, %q; want %v, %q", c.host, c.port, ok, why, c.ok, c.reason)
		}
	}
	q, _ := NewPolicy(&shared.Egress{Allow: []string{"api.example.com:8443", "*.example.org"}, Deny: []string{"x.example.org"}})
	for host, want := range map[string]bool{"api.example.com": true, "a.example.org": true, "x.example.org": false, "evil.com": false} {
		if got := q.AllowsHost(host); got != want {
			t.Errorf("AllowsHost(%s) = %v, want %v", host, got, want)
		}
	}
	for _, bad := range []*shared.Egress{
		{Allow: []string{"*.*"}},
		{Deny: []string{"a b"}},
		{DenyAddresses: []string{"10.0.0.0/33"}},
		{Credentials: []shared.Credential{{Host: "api.example.com"}}},
		nil,
	} {
		if _, err := NewPolicy(bad); err == nil {
			t.Errorf("NewPolicy(%+v) accepted it", bad)
		}
	}
}

// An address is allowed only by a pattern that is that address; deny
// still wins.
func TestDecideAddress(t *testing.T) {
	for _, c := range []struct {
		allow, deny []string
		host        string
		ok          bool
		reason      string
	}{
		{[]string{"*"}, nil, "api.test", true, ""},
		{[]string{"*"}, nil, "127.0.0.9", false, "127.0.0.9:443 is an IP address, and the grant allows it only by name"},
		{[]string{"*"}, nil, "::1", false, "[::1]:443 is an IP address"},
		{[]string{"*:443"}, nil, "127.0.0.9", false, "is an IP address"},
		{[]string{"*.0.0.9"}, nil, "127.0.0.9", false, "is an IP address"},
		{[]string{"*", "127.0.0.9"}, nil, "127.0.0.9", true, ""},
		{[]string{"*", "127.0.0.9"}, nil, "::ffff:127.0.0.9", true, ""},
		{[]string{"*", "127.0.0.9:80"}, nil, "127.0.0.9", false, "is an IP address"},
		{[]string{"*", "127.0.0.9"}, []string{"*"}, "127.0.0.9", false, "is denied by the operator (sandbox.network.deny: *)"},
		{[]string{"api.test"}, nil, "127.0.0.9", false, "is not in the allowed domains"},
	} {
		p, err := NewPolicy(&shared.Egress{Allow: c.allow, Deny: c.deny})
		if err != nil {
			t.Fatal(err)
		}
		ok, why := p.Decide(c.host, 443)
		if ok != c.ok || !strings.Contains(why, c.reason) {
			t.Errorf("allow %v deny %v: Decide(%s, 443) = %v, %q; want %v, %q", c.allow, c.deny, c.host, ok, why, c.ok, c.reason)
		}
	}
}
