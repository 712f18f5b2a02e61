package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/shared"
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
	g := Grant{Network: true, Egress: &shared.Egress{Allow: []string{"api.example.com", "*.example.com"}}}
	p := &prepared{grant: g, strategy: "fake", exec: enforcer{egress: true},
		request: shared.Request{Grant: shared.Grant(g), Env: []string{"PATH=/bin", "FAKE_API_KEY=" + secret, "KEEP=1"}}}
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

	p = &prepared{grant: g, strategy: "fake", confines: true, exec: enforcer{}, request: shared.Request{Grant: shared.Grant(g)}}
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
	g := Grant{Network: true, Egress: &shared.Egress{Allow: []string{"pypi.org"}}}
	p := &prepared{grant: g, strategy: "null", exec: enforcer{}, request: shared.Request{Grant: shared.Grant(g)}}
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
