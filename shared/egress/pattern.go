// Package egress is the network-by-name part of the plugin SDK: host
// patterns and their intersection, and the decision a grant's Egress
// makes for a host and port. The host uses it to compute and check
// grants; the per-run proxy that enforces the decision is in
// shared/egress/proxy, apart so that a host, which never runs it, does
// not carry its dependencies.
package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Pattern is a host pattern of a grant: an exact name ("api.example.com"),
// the subdomains of one ("*.example.com", which does not match
// "example.com" itself), or an IP literal, each with an optional port (0:
// any).
type Pattern struct {
	// Host is the name in lower case without a trailing dot, the domain
	// of a wildcard (without "*."), or the address of a literal.
	Host     string
	Wildcard bool
	// Addr is set for an IP literal.
	Addr netip.Addr
	Port int
}

// ParsePattern reads a pattern: "host", "*.domain", "1.2.3.4", "[::1]",
// each optionally followed by ":port", or "*" (any host, what a grant of
// the whole network becomes when the operator denies some hosts). Names
// are letters, digits, hyphens and dots, in labels of at most 63 bytes; a
// wildcard inside a name and a wildcard over a top-level domain ("*.com")
// are refused.
func ParsePattern(s string) (Pattern, error) {
	var p Pattern
	host, port := strings.TrimSpace(s), ""
	switch {
	case host == "*" || strings.HasPrefix(host, "*:"):
		p.Wildcard = true
		port = strings.TrimPrefix(host[1:], ":")
		if host == "*:" {
			return p, fmt.Errorf("host pattern %q: empty port", s)
		}
	case strings.HasPrefix(host, "["):
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return p, fmt.Errorf("host pattern %q: no closing ]", s)
		}
		host, port = host[1:end], host[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return p, fmt.Errorf("host pattern %q: text after ]", s)
		}
		port = strings.TrimPrefix(port, ":")
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return p, fmt.Errorf("host pattern %q: %q is not an IPv6 address", s, host)
		}
		p.Addr, p.Host = a, a.String()
	case strings.Count(host, ":") > 1:
		return p, fmt.Errorf("host pattern %q: write an IPv6 address in brackets, as [%s]", s, host)
	default:
		if h, pt, ok := strings.Cut(host, ":"); ok {
			host, port = h, pt
			if port == "" {
				return p, fmt.Errorf("host pattern %q: empty port", s)
			}
		}
		if a, err := netip.ParseAddr(host); err == nil {
			p.Addr, p.Host = a, a.String()
			break
		}
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		if rest, ok := strings.CutPrefix(host, "*."); ok {
			p.Wildcard, host = true, rest
			if !strings.Contains(host, ".") {
				return p, fmt.Errorf("host pattern %q: a wildcard needs a domain of two labels or more (*.example.com)", s)
			}
		}
		if err := CheckName(host); err != nil {
			return p, fmt.Errorf("host pattern %q: %w", s, err)
		}
		p.Host = host
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return p, fmt.Errorf("host pattern %q: port %q is not a number from 1 to 65535", s, port)
		}
		p.Port = n
	}
	return p, nil
}

// CheckName accepts a DNS name, lower case and without a trailing dot:
// labels of letters, digits and hyphens (and underscores, which real
// service names use), none empty or longer than 63 bytes, at most 253
// bytes in all.
func CheckName(h string) error {
	if h == "" || len(h) > 253 {
		return fmt.Errorf("%q is not a host name", h)
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("%q is not a host name (empty or long label)", h)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%q is not a host name (character %q)", h, c)
			}
		}
	}
	return nil
}

// String writes the pattern back in the form ParsePattern reads.
func (p Pattern) String() string {
	h := p.Host
	switch {
	case p.Any():
		h = "*"
	case p.Wildcard:
		h = "*." + h
	case p.Addr.Is6():
		h = "[" + h + "]"
	}
	if p.Port != 0 {
		h += ":" + strconv.Itoa(p.Port)
	}
	return h
}

// Any reports whether the pattern is "*", every host.
func (p Pattern) Any() bool { return p.Wildcard && p.Host == "" }

// Literal reports whether the pattern is an IP address.
func (p Pattern) Literal() bool { return p.Addr.IsValid() }

// Match reports whether host (a name in any case, or an address) and port
// fall under the pattern.
func (p Pattern) Match(host string, port int) bool {
	if p.Port != 0 && p.Port != port {
		return false
	}
	if p.Any() {
		return true
	}
	if p.Literal() {
		a, err := netip.ParseAddr(strings.Trim(host, "[]"))
		return err == nil && a.Unmap() == p.Addr.Unmap()
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if p.Wildcard {
		return strings.HasSuffix(host, "."+p.Host)
	}
	return host == p.Host
}

// Intersect returns the pattern both a and b match, if there is one: a
// name under both, the narrower wildcard, and the port both allow
// (declared *.github.com ∩ ceiling api.github.com:443 =
// api.github.com:443).
func Intersect(a, b Pattern) (Pattern, bool) {
	port := a.Port
	switch {
	case a.Port == 0:
		port = b.Port
	case b.Port != 0 && a.Port != b.Port:
		return Pattern{}, false
	}
	var out Pattern
	switch {
	case a.Any():
		out = b
	case b.Any():
		out = a
	case a.Literal() || b.Literal():
		if a.Literal() != b.Literal() || a.Addr.Unmap() != b.Addr.Unmap() {
			return Pattern{}, false
		}
		out = a
	case !a.Wildcard && !b.Wildcard:
		if a.Host != b.Host {
			return Pattern{}, false
		}
		out = a
	case a.Wildcard && b.Wildcard:
		switch {
		case a.Host == b.Host || strings.HasSuffix(a.Host, "."+b.Host):
			out = a
		case strings.HasSuffix(b.Host, "."+a.Host):
			out = b
		default:
			return Pattern{}, false
		}
	case a.Wildcard: // b a name
		if !strings.HasSuffix(b.Host, "."+a.Host) {
			return Pattern{}, false
		}
		out = b
	default: // a a name, b a wildcard
		if !strings.HasSuffix(a.Host, "."+b.Host) {
			return Pattern{}, false
		}
		out = a
	}
	out.Port = port
	return out, true
}

// ParsePatterns reads a list, naming the first bad entry.
func ParsePatterns(list []string) ([]Pattern, error) {
	out := make([]Pattern, 0, len(list))
	for _, s := range list {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
