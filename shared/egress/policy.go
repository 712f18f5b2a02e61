package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// Unreachable is the Detail of a violation of kind "network" for a host
// the grant allows but the proxy could not reach: its name did not
// resolve, its address refused the connection or had no route, the
// connection timed out, or TLS with it failed where the proxy speaks TLS
// to it (a host with a credential). Its Reason says which.
const Unreachable = "unreachable"

// Policy decides, from a grant's Egress, which hosts a command may reach.
type Policy struct {
	allow, deny []Pattern
	// exempted are the IP literals of the ceiling's own list: the only
	// addresses the guard's always-refused classes let through.
	exempted []Pattern
	allowRaw []string
	denyRaw  []string
	reasons  map[string]string
	denyNets []netip.Prefix
	declared []string
	ceiling  []string
	creds    map[string]shared.Credential
}

// NewPolicy reads e, naming the first bad pattern, address range or
// credential.
func NewPolicy(e *shared.Egress) (*Policy, error) {
	if e == nil {
		return nil, fmt.Errorf("egress: no policy")
	}
	p := &Policy{allowRaw: e.Allow, denyRaw: e.Deny, reasons: e.Reasons, declared: e.Declared, ceiling: e.Ceiling,
		creds: map[string]shared.Credential{}}
	var err error
	if p.allow, err = ParsePatterns(e.Allow); err != nil {
		return nil, fmt.Errorf("egress allow: %w", err)
	}
	if p.deny, err = ParsePatterns(e.Deny); err != nil {
		return nil, fmt.Errorf("egress deny: %w", err)
	}
	for _, c := range e.Ceiling {
		if pat, err := ParsePattern(c); err == nil && pat.Literal() {
			p.exempted = append(p.exempted, pat)
		}
	}
	for _, s := range e.DenyAddresses {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("egress deny_addresses: %q is neither an address nor a CIDR range", s)
			}
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		p.denyNets = append(p.denyNets, pfx.Masked())
	}
	for _, c := range e.Credentials {
		h := strings.ToLower(strings.TrimSuffix(c.Host, "."))
		if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			h = a.String()
		} else if CheckName(h) != nil {
			h = ""
		}
		if h == "" || c.Header == "" || c.Value == "" {
			return nil, fmt.Errorf("egress credential for %q: a host name, a header and a value are required", c.Host)
		}
		p.creds[h] = c
	}
	return p, nil
}

// Decide says whether host (a name or an address) and port may be
// reached, and if not, why, in words a model can act on: the configured
// reason of the deny (or allow) pattern, else what the skill declares and
// the ceiling allows. Deny wins over allow. An IP address is allowed only
// by an allow pattern that is that address: "*" (any host) and the other
// name patterns allow names alone, so that an address is never a way
// around a denied name (see the Proxy for the addresses of denied names).
func (p *Policy) Decide(host string, port int) (bool, string) {
	for i, d := range p.deny {
		if d.Match(host, port) {
			return false, p.denyReason(i, HostPort(host, port)+" is denied")
		}
	}
	literal := isAddr(host)
	byName := false
	for _, a := range p.allow {
		if a.Match(host, port) {
			if !literal || a.Literal() {
				return true, ""
			}
			byName = true
		}
	}
	if r := p.reasons[host]; r != "" {
		return false, r
	}
	if byName {
		return false, fmt.Sprintf("%s is an IP address, and the grant allows it only by name: "+
			"ask for the host by its name, or list the address in network.allow (sandbox.network.allow for the operator)", HostPort(host, port))
	}
	return false, fmt.Sprintf("%s is not in the allowed domains; the skill declares %s; the ceiling allows %s",
		HostPort(host, port), listOrNone(p.declared), listOrNone(p.ceiling))
}

// denyReason is the reason of the i-th deny pattern: the operator's, if
// configured, else what (a description of the connection) followed by
// the pattern.
func (p *Policy) denyReason(i int, what string) string {
	if r := p.reasons[p.denyRaw[i]]; r != "" {
		return r
	}
	return fmt.Sprintf("%s by the operator (sandbox.network.deny: %s)", what, p.denyRaw[i])
}

// DeniedName is a deny pattern that is an exact host name (not a
// wildcard, not an IP literal): the one kind whose addresses a proxy can
// look up and refuse as well, so that the name cannot be reached by its
// address, asked for directly or through another name.
type DeniedName struct {
	Pattern Pattern
	raw     string // as configured, for the refusal to quote
	reason  string // the operator's reason for it, if any
}

// AddressReason is why address a is refused as one of the name's
// addresses: it names the name, and gives the operator's reason for it
// when one is configured.
func (d DeniedName) AddressReason(a netip.Addr) string {
	what := fmt.Sprintf("%s is an address of %s, which is denied", a.Unmap(), d.Pattern.Host)
	if d.reason != "" {
		return what + ": " + d.reason
	}
	return what + " by the operator (sandbox.network.deny: " + d.raw + ")"
}

// DeniedNames are the deny patterns that are exact host names, in the
// order configured.
func (p *Policy) DeniedNames() []DeniedName {
	var out []DeniedName
	for i, d := range p.deny {
		if !d.Wildcard && !d.Literal() {
			out = append(out, DeniedName{Pattern: d, raw: p.denyRaw[i], reason: p.reasons[p.denyRaw[i]]})
		}
	}
	return out
}

// DenyAddresses are the operator's deny_addresses: ranges no allowed name
// may resolve to, which nothing exempts.
func (p *Policy) DenyAddresses() []netip.Prefix { return slices.Clone(p.denyNets) }

// isAddr reports whether host is an IP address (IPv6 with or without
// brackets).
func isAddr(host string) bool {
	_, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil
}

// Exempt reports whether a is allowed as an address of its own (with its
// port, if the pattern has one) by the operator's ceiling: the one way an
// address of the always-refused classes (loopback, link-local, the host's
// own) becomes reachable. A skill cannot exempt an address by declaring
// it, and a proxy never exempts an address of deny_addresses.
func (p *Policy) Exempt(a netip.Addr, port int) bool {
	for _, pat := range p.exempted {
		if pat.Addr.Unmap() == a.Unmap() && (pat.Port == 0 || pat.Port == port) {
			for _, al := range p.allow {
				if al.Literal() && al.Addr.Unmap() == a.Unmap() && (al.Port == 0 || al.Port == port) {
					return true
				}
			}
		}
	}
	return false
}

// AllowsHost reports whether host is reachable on some port: on 443, or
// on the port of an allow pattern that names one.
func (p *Policy) AllowsHost(host string) bool {
	ports := []int{443}
	for _, a := range p.allow {
		if a.Port != 0 {
			ports = append(ports, a.Port)
		}
	}
	for _, port := range ports {
		if ok, _ := p.Decide(host, port); ok {
			return true
		}
	}
	return false
}

// Credential returns the credential to inject for host, if any.
func (p *Policy) Credential(host string) (shared.Credential, bool) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		host = a.String()
	}
	c, ok := p.creds[host]
	return c, ok
}

// Credentials reports whether the policy injects any.
func (p *Policy) Credentials() bool { return len(p.creds) > 0 }

// CredentialEnv are the environment variables, NAME=placeholder, of the
// credentials that have a placeholder_env, in no particular order: what
// the command holds instead of the secret, which a proxy puts into its
// requests.
func (p *Policy) CredentialEnv() []string {
	var env []string
	for _, c := range p.creds {
		if c.PlaceholderEnv != "" {
			env = append(env, c.PlaceholderEnv+"="+c.Placeholder)
		}
	}
	return env
}

// HostPort writes host and port as a reason or a violation shows them,
// an IPv4 address as IPv4 (see ShowHost).
func HostPort(host string, port int) string {
	host = ShowHost(host)
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// ShowHost is host as a reason or a violation shows it: an IPv4-mapped
// IPv6 address (::ffff:127.0.0.2, which Go's resolver gives for an IPv4
// address) as the IPv4 address it is, anything else as it was asked for.
func ShowHost(host string) string {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && a.Is4In6() && a.Zone() == "" {
		return a.Unmap().String()
	}
	return host
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
