package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared/egress"
)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

var pluginNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`) })

// Validate checks values that decode but make no sense.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	also := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}

	if w := c.Scripts.Workdir; w != WorkdirCwd && w != WorkdirSkill {
		bad("scripts.workdir: %q is neither %q nor %q", w, WorkdirCwd, WorkdirSkill)
	}
	for _, name := range sortedKeys(c.Skills.Grants) {
		if _, err := grant.ParseWorkspace(c.Skills.Grants[name].Workspace); err != nil {
			bad("skills.grants.%s.workspace: %v", name, err)
		}
		if in := c.Skills.Grants[name].Interpreter; in != "" && !strings.HasPrefix(in, "/") && !strings.HasPrefix(in, "~/") {
			bad("skills.grants.%s.interpreter: %q is not an absolute path (or ~/...)", name, in)
		}
	}
	s := c.Sandbox
	switch {
	case s.Strategy == "":
		bad(`sandbox.strategy: the value is empty or a bare null, which YAML reads as "no value"; write strategy: "null" (quoted) for the null plugin, or auto`)
	case s.Strategy != "auto" && !pluginNameRe().MatchString(string(s.Strategy)):
		bad("sandbox.strategy: %q is not auto or a plugin name (lowercase letters, digits, - and _)", s.Strategy)
	}
	if s.Timeout <= 0 {
		bad("sandbox.timeout: must be positive")
	}
	also(validateWrites(s))
	also(validateNetwork(s.Network, s.Credentials))
	if s.KillGrace <= 0 {
		bad("sandbox.kill_grace: must be positive")
	}
	if s.OutputLimit <= 0 {
		bad("sandbox.output_limit: must be positive")
	}
	if s.Limits.OpenFiles < 0 || s.Limits.Processes < 0 || s.Limits.FileSize < 0 || s.Limits.Memory < 0 {
		bad("sandbox.limits: values must not be negative (0 means unlimited)")
	}
	names := make([]string, 0, len(c.Plugins.SHA256))
	for name := range c.Plugins.SHA256 {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if b, err := hex.DecodeString(c.Plugins.SHA256[name]); err != nil || len(b) != 32 {
			bad("plugins.sha256.%s: %q is not a SHA-256 in hex (64 characters)", name, c.Plugins.SHA256[name])
		}
	}
	for _, name := range sortedKeys(c.Plugins.Config) {
		if !pluginNameRe().MatchString(name) {
			bad("plugins.config.%s: not a plugin name (lowercase letters, digits, - and _)", name)
		} else if _, err := c.Plugins.Config[name].JSON(); err != nil {
			bad("plugins.config.%s.%v", name, err)
		}
	}
	if c.Plugins.StartTimeout <= 0 {
		bad("plugins.start_timeout: must be positive")
	}
	m := c.Match
	switch m.Strategy {
	case MatchLexical:
	case MatchEmbedding, MatchHybrid:
		if m.Embedding.URL == "" {
			bad("match.embedding.url: required when match.strategy is %s", m.Strategy)
		}
		if m.Embedding.Model == "" {
			bad("match.embedding.model: required when match.strategy is %s", m.Strategy)
		}
	default:
		bad("match.strategy: %q is not lexical, embedding or hybrid", m.Strategy)
	}
	also(inRange("threshold", m.Threshold, 0, 1, ""))
	if m.Limit < 0 {
		bad("match.limit: must not be negative (0 means no cap)")
	}
	const off = " (0 turns the factor off)"
	also(inRange("semantic", m.Semantic, 0, 20, off))
	also(inRange("everyday", m.Everyday, 0, 20, off))
	also(inRange("breadth", m.Breadth, 0, 20, off))
	also(inRange("code", m.Code, 1, 20, " (1 turns the factor off)"))
	also(inRange("examples", m.Examples, 0, 50, " (0 lends no requests)"))
	if m.Embedding.BatchSize <= 0 {
		bad("match.embedding.batch_size: must be positive")
	}
	if m.Embedding.Timeout <= 0 {
		bad("match.embedding.timeout: must be positive")
	}
	for i, r := range c.MCP.WorkspaceRoots {
		if r == "" {
			bad(`mcp.workspace_roots: entry %d is empty`, i+1)
		} else if !strings.HasPrefix(r, "/") && r != "~" && !strings.HasPrefix(r, "~/") && !strings.HasPrefix(r, "$") {
			bad("mcp.workspace_roots: entry %d, %q, is not an absolute path (or ~/..., $VAR/...): an MCP server starts in any directory", i+1, r)
		}
	}
	return errors.Join(errs...)
}

// inRange is the error of a match setting set outside [lo, hi], NaN
// included (it compares false with everything), or nil; note says what a
// value means.
func inRange[T int | float64](key string, v *T, lo, hi T, note string) error {
	if v != nil && !(*v >= lo && *v <= hi) {
		return fmt.Errorf("match.%s: %v is outside [%v, %v]%s", key, *v, lo, hi, note)
	}
	return nil
}

// validateNetwork checks sandbox.network's deny patterns and address
// ranges, its fallback, and every credential.
func validateNetwork(n NetworkCeiling, creds []Credential) error {
	var errs []error
	for i, d := range n.Deny {
		if _, err := egress.ParsePattern(d); err != nil {
			errs = append(errs, fmt.Errorf("sandbox.network.deny[%d]: %w", i, err))
		}
	}
	for i, a := range n.DenyAddresses {
		if _, err := netip.ParsePrefix(a); err != nil {
			if _, aerr := netip.ParseAddr(a); aerr != nil {
				errs = append(errs, fmt.Errorf("sandbox.network.deny_addresses[%d]: %q is neither an address nor a CIDR range (10.0.0.0/8)", i, a))
			}
		}
	}
	switch n.Fallback {
	case "", "refuse", "all":
	default:
		errs = append(errs, fmt.Errorf("sandbox.network.fallback: %q is neither refuse nor all", n.Fallback))
	}
	for i, c := range creds {
		at := fmt.Sprintf("sandbox.credentials[%d]", i)
		if p, err := egress.ParsePattern(c.Host); err != nil || p.Wildcard || p.Port != 0 {
			errs = append(errs, fmt.Errorf("%s.host: %q is not a host name or address (no wildcard or port)", at, c.Host))
		}
		if c.Header == "" || strings.ContainsAny(c.Header, " :\r\n") {
			errs = append(errs, fmt.Errorf("%s.header: %q is not a header name", at, c.Header))
		}
		if !envNameRe().MatchString(c.FromEnv) {
			errs = append(errs, fmt.Errorf("%s.from_env: %q is not an environment variable name", at, c.FromEnv))
		}
		if c.PlaceholderEnv != "" && !envNameRe().MatchString(c.PlaceholderEnv) {
			errs = append(errs, fmt.Errorf("%s.placeholder_env: %q is not an environment variable name", at, c.PlaceholderEnv))
		}
	}
	return errors.Join(errs...)
}

var envNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// validateWrites checks sandbox.writes and the protected-path lists.
func validateWrites(s Sandbox) error {
	if s.Writes != WritesStaged && s.Writes != WritesDirect {
		return fmt.Errorf("sandbox.writes: %q is neither %q nor %q", s.Writes, WritesStaged, WritesDirect)
	}
	for i, p := range s.Protected {
		if strings.TrimSpace(p) == "" || strings.Trim(p, "/") == "" {
			return fmt.Errorf("sandbox.protected[%d]: %q names no path (a name, a relative path, or an absolute one other than /)", i, p)
		}
	}
	return nil
}
