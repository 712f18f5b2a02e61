package host

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/sandbox"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/egress"
)

// DefaultPlaceholder is what a run sees in a credential's placeholder
// variable when the configuration names none.
const DefaultPlaceholder = "skillhost-placeholder"

// EgressError is a run refused because its grant names hosts and the
// strategy cannot enforce a list of hosts.
type EgressError struct {
	Strategy string
	Hosts    []string
}

func (e *EgressError) Error() string {
	return fmt.Sprintf("the grant allows only %s, and the %s strategy cannot enforce a list of hosts; "+
		"run it with landlock (Linux) or seatbelt (macOS), or set sandbox.network.fallback: all to give such skills the whole network",
		strings.Join(e.Hosts, ", "), e.Strategy)
}

// routeEgress readies a grant by name for its run: the strategy must
// enforce it (or the operator allowed the whole network instead, which
// the result then lists as not enforced), and the credentials for the
// hosts it allows are read from the host's environment into the request
// alone (never into the grant the result shows). The variables holding
// them never reach the run.
func (h *Host) routeEgress(ctx context.Context, p *prepared) (notEnforced []string, err error) {
	// A credential's variable reaches no run, whatever sandbox.env says
	// and whatever the run's network.
	for _, c := range h.Config.Sandbox.Credentials {
		p.request.Env = slices.DeleteFunc(p.request.Env, func(kv string) bool { return strings.HasPrefix(kv, c.FromEnv+"=") })
	}
	e := p.request.Grant.Egress
	if e == nil {
		if msg := h.withheldNetwork(p.skill); msg != "" {
			h.Warn("%s", msg)
		}
		return nil, nil
	}
	info, err := p.exec.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", p.strategy, err)
	}
	if !info.Enforces.Egress {
		// A strategy that confines nothing by choice (null, for trust:
		// core; the in-process runner) runs it as it runs everything else,
		// and says so; one that confines but cannot enforce a list must
		// not quietly hand out the whole network.
		why := "sandbox.network.fallback: all"
		switch {
		case !p.confines:
			why = "it confines nothing"
		case h.Config.Sandbox.Network.Fallback != "all":
			return nil, &EgressError{Strategy: p.strategy, Hosts: e.Allow}
		}
		p.request.Grant.Egress = nil
		return []string{fmt.Sprintf("network limited to %s: the %s strategy cannot enforce a list of hosts, so the run had the whole network (%s)",
			strings.Join(e.Allow, ", "), p.strategy, why)}, nil
	}
	routed := *e
	routed.Credentials = nil
	pol, err := egress.NewPolicy(e)
	if err != nil {
		return nil, err
	}
	for i, c := range h.Config.Sandbox.Credentials {
		if !pol.AllowsHost(c.Host) {
			continue
		}
		secret := os.Getenv(c.FromEnv)
		if secret == "" {
			h.Warn("sandbox.credentials[%d]: $%s is not set; %s gets no credential", i, c.FromEnv, c.Host)
			continue
		}
		ph := c.Placeholder
		if ph == "" {
			ph = DefaultPlaceholder
		}
		routed.Credentials = append(routed.Credentials, sandbox.WireCredential(grant.Credential{Host: c.Host, Header: c.Header, Prefix: c.Prefix,
			Value: secret, Placeholder: ph, PlaceholderEnv: c.PlaceholderEnv}))
	}
	p.request.Grant.Egress = &routed
	return nil, nil
}

// withheldNetwork says, of a skill given hosts by name (in its SKILL.md,
// or by the operator in skills.grants) while the operator's ceiling
// allows no network at all, that its runs get none and what would change
// that; "" for any other skill. Without it a run shows only a name that
// did not resolve.
func (h *Host) withheldNetwork(s *skill.Skill) string {
	if s == nil || h.Config.Ceiling().Network {
		return ""
	}
	who, hosts := "", []string(nil)
	op := h.operatorGrant(s).Operator()
	declared := s.Declared
	switch {
	case op.Hosts != nil:
		who, hosts = fmt.Sprintf("skills.grants.%s grants skill %q network access to", s.Name, s.Name), op.Hosts
	case op.Network != nil && !*op.Network:
		return "" // the operator withdrew it
	case declared.Network && len(declared.Hosts) > 0:
		who, hosts = fmt.Sprintf("skill %q declares network access to", s.Name), declared.Hosts
	default:
		return ""
	}
	return fmt.Sprintf("%s %s, but the operator's sandbox.network allows no network, so its runs have none "+
		"(a name does not resolve, a connection fails); to let it reach them, list them in sandbox.network.allow in the configuration",
		who, strings.Join(hosts, ", "))
}

// NetworkWarnings are withheldNetwork's words for every loaded skill that
// is given hosts the ceiling withholds (see doctor).
func (h *Host) NetworkWarnings() []string {
	var out []string
	for _, s := range h.Catalog.All() {
		if msg := h.withheldNetwork(s); msg != "" {
			out = append(out, msg)
		}
	}
	return out
}

// networkLine is the line after a run's output that tells an agent of a
// network violation: a connection the proxy refused, or an allowed host
// it could not reach (egress.Unreachable); "" for any other violation.
func networkLine(v shared.Violation) string {
	switch {
	case v.Kind != "network" || v.Reason == "":
		return ""
	case v.Detail == egress.Unreachable:
		return fmt.Sprintf("[skillhost could not reach %s: %s]", v.Target, v.Reason)
	}
	return fmt.Sprintf("[skillhost refused a connection to %s: %s]", v.Target, v.Reason)
}
