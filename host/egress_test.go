package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/sandbox"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/egress"
)

// enforcer is an executor that says whether it enforces egress.
type enforcer struct {
	shared.Executor
	egress bool
}

func (e enforcer) Info(context.Context) (shared.Info, error) {
	return shared.Info{Name: "fake", Enforces: shared.Enforcement{Egress: e.egress}}, nil
}

func TestRouteEgress(t *testing.T) {
	const secret = "sk-host-test-secret"
	t.Setenv("FAKE_API_KEY", secret)
	cfg := config.Default()
	cfg.Sandbox.Credentials = []config.Credential{
		{Host: "api.example.com", Header: "x-api-key", FromEnv: "FAKE_API_KEY", PlaceholderEnv: "FAKE_API_KEY"},
		{Host: "other.example.com", Header: "Authorization", Prefix: "Bearer ", FromEnv: "UNSET_KEY"},
		{Host: "elsewhere.example", Header: "x", FromEnv: "FAKE_API_KEY"},
	}
	var warnings bytes.Buffer
	h := &Host{Config: cfg, warnings: &warnings, warned: map[string]bool{}}
	g := grant.Grant{Network: true, Egress: &grant.Egress{Allow: []string{"api.example.com", "*.example.com"}}}
	p := &prepared{grant: g, strategy: "fake", exec: enforcer{egress: true},
		request: shared.Request{Grant: sandbox.WireGrant(g), Env: []string{"PATH=/bin", "FAKE_API_KEY=" + secret, "KEEP=1"}}}
	if _, err := h.routeEgress(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	creds := p.request.Grant.Egress.Credentials
	if len(creds) != 1 || creds[0].Value != secret || creds[0].Host != "api.example.com" || creds[0].Placeholder != DefaultPlaceholder {
		t.Errorf("credentials %+v", creds)
	}
	if slices.ContainsFunc(p.request.Env, func(kv string) bool { return strings.Contains(kv, secret) }) || !slices.Contains(p.request.Env, "KEEP=1") {
		t.Errorf("the run's environment %q", p.request.Env)
	}
	if !strings.Contains(warnings.String(), "$UNSET_KEY is not set; other.example.com gets no credential") {
		t.Errorf("warnings %q", warnings.String())
	}
	// The grant the result shows never holds the secret.
	data, _ := json.Marshal(p.grant)
	if strings.Contains(string(data), secret) || p.grant.Egress.Credentials != nil {
		t.Errorf("the grant holds the secret: %s", data)
	}

	p = &prepared{grant: g, strategy: "fake", confines: true, exec: enforcer{}, request: shared.Request{Grant: sandbox.WireGrant(g)}}
	var ee *EgressError
	if _, err := h.routeEgress(context.Background(), p); !errors.As(err, &ee) || !strings.Contains(err.Error(), "sandbox.network.fallback: all") {
		t.Errorf("a strategy without egress: %v", err)
	}
	h.Config.Sandbox.Network.Fallback = "all"
	notes, err := h.routeEgress(context.Background(), p)
	if err != nil || p.request.Grant.Egress != nil || !p.request.Grant.Network || len(notes) != 1 {
		t.Errorf("fallback all: %v %+v %q", err, p.request.Grant, notes)
	}
}

func TestRouteEgressUnconfined(t *testing.T) {
	h := &Host{Config: config.Default(), warned: map[string]bool{}}
	g := grant.Grant{Network: true, Egress: &grant.Egress{Allow: []string{"pypi.org"}}}
	p := &prepared{grant: g, strategy: "null", exec: enforcer{}, request: shared.Request{Grant: sandbox.WireGrant(g)}}
	notes, err := h.routeEgress(context.Background(), p)
	if err != nil || p.request.Grant.Egress != nil || len(notes) != 1 || !strings.Contains(notes[0], "it confines nothing") {
		t.Errorf("the null strategy: %v %q", err, notes)
	}
}

// A credential's variable never reaches a run, with or without a list.
func TestCredentialVariableNeverPasses(t *testing.T) {
	cfg := config.Default()
	cfg.Sandbox.Credentials = []config.Credential{{Host: "api.example.com", Header: "x", FromEnv: "FAKE_API_KEY"}}
	h := &Host{Config: cfg, warned: map[string]bool{}}
	p := &prepared{strategy: "null", exec: enforcer{}, request: shared.Request{Env: []string{"FAKE_API_KEY=secret", "KEEP=1"}}}
	if _, err := h.routeEgress(context.Background(), p); err != nil || !slices.Equal(p.request.Env, []string{"KEEP=1"}) {
		t.Errorf("%v %q", err, p.request.Env)
	}
}

// declaring is a skill whose SKILL.md says network: value.
func declaring(t *testing.T, name, value string) *skill.Skill {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		t.Fatal(err)
	}
	d, _ := grant.FromFrontMatter(map[string]*yaml.Node{"network": doc.Content[0]})
	return &skill.Skill{Name: name, Declared: d}
}

// A skill given hosts while the operator's ceiling allows no network is
// told so once, at run time, with the remedy; a skill asking for nothing,
// or a ceiling that allows a network, is not.
func TestRouteEgressWithheldNetwork(t *testing.T) {
	const want = `warning: skill "net" declares network access to api.example.com, pypi.org, but the operator's sandbox.network allows no network, ` +
		"so its runs have none (a name does not resolve, a connection fails); to let it reach them, list them in sandbox.network.allow in the configuration\n"
	run := func(h *Host, s *skill.Skill) {
		t.Helper()
		p := &prepared{skill: s, strategy: "fake", exec: enforcer{egress: true}}
		if _, err := h.routeEgress(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	var warnings bytes.Buffer
	h := &Host{Config: config.Default(), warnings: &warnings, warned: map[string]bool{}}
	net := declaring(t, "net", `["api.example.com", "pypi.org"]`)
	run(h, net)
	run(h, net) // once
	if warnings.String() != want {
		t.Errorf("warnings %q, want %q", warnings.String(), want)
	}
	if got := h.withheldNetwork(declaring(t, "quiet", "false")) + h.withheldNetwork(declaring(t, "any", "true")); got != "" {
		t.Errorf("a skill without hosts: %q", got)
	}

	// The operator's grant names the hosts, or withdraws the network.
	h.Config.Skills.Grants = map[string]config.SkillGrant{"net": {Network: &config.Hosts{On: true, List: []string{"api.github.com"}}}}
	if got := h.withheldNetwork(net); !strings.HasPrefix(got, `skills.grants.net grants skill "net" network access to api.github.com, but`) {
		t.Errorf("hosts from the operator: %q", got)
	}
	h.Config.Skills.Grants = map[string]config.SkillGrant{"net": {Network: &config.Hosts{}}}
	if got := h.withheldNetwork(net); got != "" {
		t.Errorf("withdrawn by the operator: %q", got)
	}

	// A ceiling that allows a network (the grant then says what is
	// reached) is no reason to warn.
	h.Config.Skills.Grants = nil
	h.Config.Sandbox.Network.Allow = config.Hosts{On: true, List: []string{"pypi.org"}}
	if got := h.withheldNetwork(net); got != "" {
		t.Errorf("a ceiling with hosts: %q", got)
	}
}

// An allowed host the proxy could not reach ends the text with its own
// line, as a refusal does.
func TestWriteTextUnreachable(t *testing.T) {
	r := &RunReport{Output: "curl: (56) CONNECT tunnel failed, response 502\n", Violations: []shared.Violation{
		{Kind: "network", Target: "127.0.0.3:80", Host: "127.0.0.3", Port: 80, Reason: "127.0.0.3:80 is not in the allowed domains"},
		{Kind: "network", Target: "api.test:443", Host: "api.test", Port: 443, Reason: "127.0.0.2: connection refused", Detail: egress.Unreachable},
		{Kind: "fs", Target: "/etc/shadow"},
	}}
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	want := "curl: (56) CONNECT tunnel failed, response 502\n" +
		"\n[skillhost refused a connection to 127.0.0.3:80: 127.0.0.3:80 is not in the allowed domains]" +
		"\n[skillhost could not reach api.test:443: 127.0.0.2: connection refused]\n"
	if out.String() != want {
		t.Errorf("text %q\nwant %q", out.String(), want)
	}
}
