package grant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/shared/egress"
)

// AnyHost is how a grant of the whole network lists its hosts when the
// operator's deny rules or credentials need the proxy all the same.
const AnyHost = "*"

// networkGrant intersects what is declared (d.Network, with d.Hosts, nil
// meaning whatever the ceiling allows) with the ceiling. The result is off,
// the whole network (no Egress: as before lists existed), or named hosts
// through the backend's proxy (Egress). It sets out's Grant.Network and
// Grant.Egress, says in Origins.Hosts where each allowed pattern came from
// (declared: from, "skill" or "operator"; the ceiling; or both when they
// wrote the same pattern), and adds its warnings.
func networkGrant(d Declared, c Ceiling, from string, out *Computed) {
	if !d.Network || !c.Network {
		return
	}
	field := "network"
	if from == FromOperator {
		field = "skills.grants network"
	}
	declared, w := patterns(field, d.Hosts)
	out.warn(w...)
	ceiling, w := patterns("sandbox.network.allow", c.Hosts)
	out.warn(w...)
	if d.Hosts != nil && len(declared) == 0 {
		out.warn("network: no usable host pattern is declared; no network")
		return
	}
	if d.Hosts == nil && c.Hosts == nil && len(c.Deny) == 0 && len(c.DenyAddresses) == 0 && len(c.Keyed) == 0 {
		out.Grant.Network = true // the whole network, as the booleans always gave
		return
	}
	if d.Hosts == nil {
		declared = []egress.Pattern{{Wildcard: true}}
	}
	if c.Hosts == nil {
		ceiling = []egress.Pattern{{Wildcard: true}}
	}
	origin := map[string][]string{}
	var allow []string
	for _, a := range declared {
		for _, b := range ceiling {
			p, ok := egress.Intersect(a, b)
			if !ok {
				continue
			}
			s := p.String()
			if !slices.Contains(allow, s) {
				allow = append(allow, s)
			}
			for _, o := range []struct {
				pat  egress.Pattern
				name string
			}{{a, from}, {b, FromCeiling}} {
				if o.pat.String() == s && !slices.Contains(origin[s], o.name) {
					origin[s] = append(origin[s], o.name)
				}
			}
		}
	}
	if len(allow) == 0 {
		out.warn(fmt.Sprintf("network: none of the declared hosts (%s) is allowed by sandbox.network.allow (%s); no network",
			strings.Join(d.Hosts, ", "), strings.Join(c.Hosts, ", ")))
		return
	}
	e := &Egress{Allow: allow, Deny: slices.Clone(c.Deny), DenyAddresses: slices.Clone(c.DenyAddresses),
		Declared: orAny(d.Hosts), Ceiling: orAny(c.Hosts)}
	if len(c.Reasons) > 0 {
		e.Reasons = map[string]string{}
		for k, v := range c.Reasons {
			e.Reasons[k] = v
		}
	}
	out.Grant.Network, out.Grant.Egress, out.Origins.Hosts = true, e, origin
}

// patterns parses a list, warning about (and dropping) each bad entry.
func patterns(field string, list []string) ([]egress.Pattern, []string) {
	var out []egress.Pattern
	var warnings []string
	for _, s := range list {
		p, err := egress.ParsePattern(s)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %v; ignored", field, err))
			continue
		}
		out = append(out, p)
	}
	return out, warnings
}

func orAny(l []string) []string {
	if l == nil {
		return []string{"any host"}
	}
	return slices.Clone(l)
}
