package sandbox

import (
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared"
)

// WireGrant is g as the plugin contract carries it (shared.Grant,
// docs/contract.md). It is the one place the host's grant becomes the
// wire's: a grant field a plugin needs is copied here, one it need not
// know stays on the host.
func WireGrant(g grant.Grant) shared.Grant {
	return shared.Grant{
		FSRead:    g.FSRead,
		FSWrite:   g.FSWrite,
		Network:   g.Network,
		Timeout:   g.Timeout,
		Trust:     g.Trust,
		Protected: g.Protected,
		Egress:    wireEgress(g.Egress),
	}
}

func wireEgress(e *grant.Egress) *shared.Egress {
	if e == nil {
		return nil
	}
	out := &shared.Egress{Allow: e.Allow, Deny: e.Deny, Reasons: e.Reasons, DenyAddresses: e.DenyAddresses,
		Declared: e.Declared, Ceiling: e.Ceiling}
	for _, c := range e.Credentials {
		out.Credentials = append(out.Credentials, WireCredential(c))
	}
	return out
}

// WireCredential is c as the plugin contract carries it.
func WireCredential(c grant.Credential) shared.Credential {
	return shared.Credential{Host: c.Host, Header: c.Header, Prefix: c.Prefix, Value: c.Value,
		Placeholder: c.Placeholder, PlaceholderEnv: c.PlaceholderEnv}
}
