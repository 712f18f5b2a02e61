// Package grant turns what a skill declares it needs (fs_read, fs_write,
// network, timeout, trust) and what the configuration allows (the ceiling)
// into the effective grant a sandbox enforces.
//
// Every function here is pure policy: it reads the file system only to
// resolve symlinks, and never starts or restricts a process.
package grant

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// DefaultTimeout is used when a skill declares no usable timeout.
const DefaultTimeout = 60 * time.Second

// Trust levels, as the plugin contract names them.
const (
	TrustCore     = shared.TrustCore
	TrustExternal = shared.TrustExternal
)

// Declared is what a skill's front matter asks for, normalised.
type Declared struct {
	FSRead  []string
	FSWrite []string
	Network bool
	// Hosts, when not nil, narrows Network to these host patterns
	// (network: [api.example.com, "*.example.org:443"]); nil with Network
	// means whatever the ceiling allows.
	Hosts   []string
	Timeout time.Duration
	Trust   string
	// Dir is the skill's directory, resolved through symlinks: trust is
	// bound to it, never to the name.
	Dir string
}

// Ceiling is the most any skill may be granted (the config sandbox:
// section). Paths may be relative or start with ~; they are resolved when a
// grant is computed.
type Ceiling struct {
	FSRead  []string
	FSWrite []string
	Network bool
	// Hosts, when not nil, are the only host patterns any skill may reach
	// (sandbox.network.allow as a list); nil means any host.
	Hosts []string
	// Deny are host patterns no skill may reach, whatever it declares,
	// with Reasons (by pattern) shown to the script when it is refused.
	Deny    []string
	Reasons map[string]string
	// DenyAddresses are address ranges an allowed name may not resolve to.
	DenyAddresses []string
	// Keyed are the hosts the operator holds credentials for: reaching
	// them goes through the proxy, which puts the secret in.
	Keyed   []string
	Timeout time.Duration
	// Trusted lists the directories of the skills whose trust: core is
	// honoured (absolute, or starting with ~). A bare name is refused: a
	// skill of that name could be planted anywhere the catalog looks.
	Trusted []string
}

// Grant is the effective grant: declared ∩ ceiling, with absolute paths
// resolved through symlinks. It is the host's own type: host/internal/sandbox
// converts it to the plugin contract's shared.Grant (docs/contract.md),
// so a field the plugin need not know stays out of the contract.
type Grant struct {
	FSRead  []string
	FSWrite []string
	Network bool
	Timeout time.Duration
	Trust   string
	// Protected are paths inside FSWrite that stay read-only (version
	// control hooks and config, shell start-up files, skill roots...):
	// each exists; missing ones the host checks after the run.
	Protected []string
	// Egress, when not nil (and Network set), narrows the network to
	// named hosts reached through the backend's egress proxy.
	Egress *Egress
}

// Egress is a grant's network by name: the host patterns a run may reach
// ("host", "*.domain", either with ":port", IP literals), through the
// backend's proxy.
type Egress struct {
	// Allow are the patterns a connection's host and port must match.
	Allow []string
	// Deny are patterns that win over Allow.
	Deny []string
	// Reasons maps a Deny or Allow pattern to the reason given to the
	// command when a connection is refused for it.
	Reasons map[string]string
	// DenyAddresses are address ranges (CIDR) an allowed name may not
	// resolve to.
	DenyAddresses []string
	// Declared and Ceiling are the skill's and the operator's patterns,
	// quoted in the generic reason of a refusal.
	Declared, Ceiling []string
	// Credentials are secrets the proxy puts into requests to their host.
	// The host adds them to the run's request alone (never to the grant
	// a result shows), so a computed grant has none.
	Credentials []Credential
}

// Credential is a secret the egress proxy injects: in requests to Host,
// the header Header gets Prefix+Value wherever the command sent
// Placeholder (found in the variable PlaceholderEnv), or nothing.
type Credential struct {
	Host, Header, Prefix, Value, Placeholder, PlaceholderEnv string
}

// Core reports whether the grant runs unconfined (an honoured trust: core).
func (g Grant) Core() bool { return g.Trust == TrustCore }

// MarshalJSON renders the grant with the timeout in seconds and empty lists
// as [] rather than null.
func (g Grant) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		FSRead  []string    `json:"fs_read"`
		FSWrite []string    `json:"fs_write"`
		Network bool        `json:"network"`
		Timeout json.Number `json:"timeout"`
		Trust   string      `json:"trust"`
		// Protected are paths inside fs_write that stay read-only.
		Protected []string `json:"protected,omitempty"`
		// Egress narrows network to named hosts.
		Egress *egressJSON `json:"egress,omitempty"`
	}{nonNil(g.FSRead), nonNil(g.FSWrite), g.Network, json.Number(Seconds(g.Timeout)), g.Trust, g.Protected, egressOf(g.Egress)})
}

// egressJSON is a grant's Egress without secrets: credentials by host and
// header only.
type egressJSON struct {
	Allow         []string          `json:"allow"`
	Deny          []string          `json:"deny,omitempty"`
	Reasons       map[string]string `json:"reasons,omitempty"`
	DenyAddresses []string          `json:"deny_addresses,omitempty"`
	Credentials   []string          `json:"credentials,omitempty"`
}

func egressOf(e *Egress) *egressJSON {
	if e == nil {
		return nil
	}
	out := &egressJSON{Allow: e.Allow, Deny: e.Deny, Reasons: e.Reasons, DenyAddresses: e.DenyAddresses}
	for _, c := range e.Credentials {
		out.Credentials = append(out.Credentials, c.Host+" "+c.Header)
	}
	return out
}

// Seconds formats d as a plain number of seconds ("60", "0.5").
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Env says where relative and ~ paths resolve.
type Env struct {
	// Cwd is the host's working directory; relative paths resolve here.
	Cwd string
	// Home replaces a leading ~.
	Home string
}

// Computed is an effective grant with its account: where each part came
// from and what was dropped or downgraded on the way.
type Computed struct {
	Grant Grant
	// Origins say where each part of Grant came from (ComputeWith fills
	// the paths; Compute only Hosts).
	Origins Origins
	// Warnings name everything dropped or downgraded, one sentence each.
	Warnings []string
	// Unborn are protected paths inside the write grant that do not exist
	// yet (Protection.Missing): whoever runs the skill checks after the run
	// that none was created. The computing functions here leave it empty.
	Unborn []string
}

// warn appends a warning.
func (c *Computed) warn(msgs ...string) { c.Warnings = append(c.Warnings, msgs...) }

// Compute intersects a declaration with the ceiling for the skill called
// name. It returns the grant and a warning for everything it dropped or
// downgraded; it never fails.
//
//   - A path survives only if, after expansion and symlink resolution, it
//     equals a (resolved) ceiling root or lies beneath one on a path
//     component boundary: /tmpfoo is not under /tmp, and a ceiling of /
//     admits everything. A symlink inside an allowed directory that points
//     outside it resolves outside and is dropped.
//   - Network is granted only if both allow it, to the hosts both allow
//     (see networkGrant); the timeout is the smaller.
//   - trust: core is honoured only for a skill whose resolved directory
//     Ceiling.Trusted lists.
func Compute(name string, d Declared, c Ceiling, env Env) (Grant, []string) {
	r := compute(name, d, c, env, FromSkill)
	return r.Grant, r.Warnings
}

// resolvedCeiling is a ceiling's roots as compute resolved them.
type resolvedCeiling struct{ read, write []string }

// clamped is what compute found: the grant, with the origin of each allowed
// host pattern, and the ceiling's roots as resolved, so that ComputeWith
// clamps more paths without resolving them again.
type clamped struct {
	Computed
	roots resolvedCeiling
}

// compute is Compute with its whole account; netFrom is who declared d's
// network (FromSkill or FromOperator).
func compute(name string, d Declared, c Ceiling, env Env, netFrom string) clamped {
	var r clamped
	r.Grant = Grant{Timeout: d.Timeout, Trust: TrustExternal}
	networkGrant(d, c, netFrom, &r.Computed)
	if r.Grant.Timeout <= 0 {
		r.Grant.Timeout = DefaultTimeout
	}
	if c.Timeout > 0 && c.Timeout < r.Grant.Timeout {
		r.Grant.Timeout = c.Timeout
	}
	if d.Trust == TrustCore {
		switch {
		case d.Dir != "" && trustedDir(d.Dir, c.Trusted, env):
			r.Grant.Trust = TrustCore
		case slices.Contains(c.Trusted, name):
			r.warn("trust: core is ignored: sandbox.trusted names skill " + strconv.Quote(name) +
				", but trust is bound to a directory; list " + strconv.Quote(d.Dir) + " there instead; it runs as external")
		default:
			r.warn("trust: core is ignored because the directory of skill " + strconv.Quote(name) +
				" is not listed in sandbox.trusted; it runs as external")
		}
	}
	writable := WritableRoots(c.FSWrite, env)
	var w []string
	for _, f := range []struct {
		field             string
		declared, ceiling []string
		roots, out        *[]string
	}{
		{"fs_read", d.FSRead, c.FSRead, &r.roots.read, &r.Grant.FSRead},
		{"fs_write", d.FSWrite, c.FSWrite, &r.roots.write, &r.Grant.FSWrite},
	} {
		*f.roots, w = ceilingRoots(f.field, f.ceiling, writable, env)
		r.warn(w...)
		*f.out, w = clampTo(f.field, f.declared, *f.roots, f.ceiling, env)
		r.warn(w...)
	}
	return r
}

// trustedDir reports whether dir is one of the trusted entries that name a
// directory (absolute or ~), each resolved through symlinks.
func trustedDir(dir string, trusted []string, env Env) bool {
	for _, t := range trusted {
		if !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") {
			continue
		}
		if r, err := Resolve(t, env); err == nil && r == dir {
			return true
		}
	}
	return false
}
