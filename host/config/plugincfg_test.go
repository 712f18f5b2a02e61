package config

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func pluginJSON(t *testing.T, c *Config, name string) string {
	t.Helper()
	doc, err := c.Plugins.Config[name].JSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// TestPluginConfig: plugins.config.<name> reaches the plugin as JSON,
// whatever its keys, since only the plugin knows them.
func TestPluginConfig(t *testing.T) {
	isolate(t)
	c, err := Load(write(t, `
plugins:
  config:
    landlock: {best_effort: true}
    nomad:
      datacenter: dc1
      limits: {cpu: 500, tags: [a, b]}
    "null":
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := pluginJSON(t, c, "landlock"); got != `{"best_effort":true}` {
		t.Errorf("landlock: %s", got)
	}
	if got := pluginJSON(t, c, "nomad"); got != `{"datacenter":"dc1","limits":{"cpu":500,"tags":["a","b"]}}` {
		t.Errorf("nomad: %s", got)
	}
	if got := pluginJSON(t, c, "null"); got != `{}` || !c.Plugins.Config["null"].Empty() {
		t.Errorf("null: %s", got)
	}
	if len(c.Deprecations) != 0 {
		t.Errorf("deprecations: %q", c.Deprecations)
	}
}

func TestPluginConfigErrors(t *testing.T) {
	cases := map[string]string{
		"plugins:\n  config:\n    landlock: true\n":        "line 3: plugins.config.landlock: expected a mapping of the plugin's settings, not a value",
		"plugins:\n  config:\n    landlock: {1: x}\n":      "plugins.config.landlock.1: the key is not a string",
		"plugins:\n  config:\n    Bad/Name: {a: 1}\n":      "plugins.config.Bad/Name: not a plugin name",
		"plugins:\n  config:\n    landlock: {a: [.inf]}\n": "plugins.config.landlock.a.0: +Inf has no JSON form",
	}
	for in, want := range cases {
		isolate(t)
		_, err := Load(write(t, in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

// TestDeprecatedLandlockSection: sandbox.landlock still works, as
// plugins.config.landlock, with a warning naming the line and the new
// place; a setting written in the new place wins.
func TestDeprecatedLandlockSection(t *testing.T) {
	isolate(t)
	p := write(t, "sandbox:\n  network: true\n  landlock:\n    best_effort: true\n")
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := pluginJSON(t, c, "landlock"); got != `{"best_effort":true}` {
		t.Errorf("moved settings: %s", got)
	}
	if !c.Sandbox.Network.Allow.On {
		t.Error("the rest of the sandbox section was lost")
	}
	want := p + ": line 3: sandbox.landlock is deprecated; write its settings under plugins.config.landlock"
	if len(c.Deprecations) != 1 || c.Deprecations[0] != want {
		t.Errorf("deprecations %q, want [%q]", c.Deprecations, want)
	}

	c, err = Load(write(t, "sandbox:\n  landlock: {best_effort: true, other: 1}\nplugins:\n  config:\n    landlock: {best_effort: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := pluginJSON(t, c, "landlock"); got != `{"best_effort":false,"other":1}` {
		t.Errorf("merged settings: %s", got)
	}
}

func TestPluginConfigEnv(t *testing.T) {
	isolate(t)
	t.Setenv("SKILLHOST_PLUGINS__CONFIG__NOMAD__LIMITS__CPU", "500")
	t.Setenv("SKILLHOST_PLUGINS__CONFIG__NOMAD__REGION", "eu")
	t.Setenv("SKILLHOST_SANDBOX__LANDLOCK__BEST_EFFORT", "true")
	c, err := Load(write(t, "plugins:\n  config:\n    nomad: {region: us, datacenter: dc1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := pluginJSON(t, c, "nomad"); got != `{"datacenter":"dc1","limits":{"cpu":500},"region":"eu"}` {
		t.Errorf("nomad: %s", got)
	}
	if got := pluginJSON(t, c, "landlock"); got != `{"best_effort":true}` {
		t.Errorf("landlock: %s", got)
	}
	want := "environment variable SKILLHOST_SANDBOX__LANDLOCK__BEST_EFFORT: sandbox.landlock is deprecated; write its settings under plugins.config.landlock"
	if len(c.Deprecations) != 1 || c.Deprecations[0] != want {
		t.Errorf("deprecations %q, want [%q]", c.Deprecations, want)
	}
	t.Setenv("SKILLHOST_PLUGINS__CONFIG__NOMAD", "x")
	if _, err := Load(""); err == nil || !strings.Contains(err.Error(), "set one setting at a time") {
		t.Errorf("a whole plugin document from one variable: %v", err)
	}
}

func TestValueOf(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a: 1\nb: {c: 2}\na: 3\n"), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Content[0]
	if v := valueOf(m, "a"); v == nil || v.Value != "3" {
		t.Errorf("a repeated key: %+v, want the last value, 3", v)
	}
	if v := valueOf(m, "nope"); v != nil {
		t.Errorf("a missing key: %+v, want nil", v)
	}
	if v := lookup(&doc, "b", "c"); v != nil {
		t.Errorf("lookup on the document node: %+v, want nil (it is not a mapping)", v)
	}
	if v := lookup(m, "b", "c"); v == nil || v.Value != "2" {
		t.Errorf("lookup b.c: %+v, want 2", v)
	}
	if v := lookup(m, "a", "c"); v != nil {
		t.Errorf("lookup through a scalar: %+v, want nil", v)
	}
}
