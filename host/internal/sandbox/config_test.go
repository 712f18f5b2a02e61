package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestPluginSettings checks that plugins.config.<name> reaches the plugin,
// that its verdict is shown naming the key, and that a plugin's own
// best-effort setting, stated in its Probe, is what lets the host send
// commands to a plugin that cannot confine them.
func TestPluginSettings(t *testing.T) {
	cases := []struct {
		name     string
		settings string
		wantErr  []string // empty: the call works
	}{
		{name: "none"},
		{name: "valid", settings: `{"probe": "healthy"}`},
		{name: "bad value", settings: `{"probe": "sideways"}`,
			wantErr: []string{`sandbox plugin "fault" (`, `refused its settings: plugins.config.fault.probe: "sideways" is neither healthy nor unsupported`}},
		{name: "unknown key", settings: `{"prob": "healthy"}`,
			wantErr: []string{"plugins.config.fault.prob: unknown setting"}},
		{name: "wrong type", settings: `{"best_effort": "yes"}`,
			wantErr: []string{"plugins.config.fault.best_effort: a string is not allowed here; want a boolean"}},
		{name: "unsupported", settings: `{"probe": "unsupported"}`,
			wantErr: []string{`sandbox plugin "fault"`, "cannot confine scripts here (unsupported: told so)", "under plugins.config.fault"}},
		{name: "unsupported, best effort", settings: `{"probe": "unsupported", "best_effort": true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newFaultRig(t, func(o *Options) {
				if tc.settings != "" {
					o.Configs = map[string][]byte{"fault": []byte(tc.settings)}
				}
			})
			out, err := r.call(context.Background(), "hi")
			if len(tc.wantErr) == 0 {
				if err != nil || out != "hi\n" {
					t.Fatalf("call: %q, %v", out, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("call succeeded: %q", out)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// TestSettingsForAPluginWithout: settings for a plugin that takes none are
// refused rather than silently ignored; without settings it works.
func TestSettingsForAPluginWithout(t *testing.T) {
	m := manager(t, func(o *Options) { o.Configs = map[string][]byte{"null": []byte(`{"x": 1}`)} })
	_, _, err := execute(context.Background(), m.Executor("null"), request("echo hi"))
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "plugins.config.null: this plugin takes no settings") {
		t.Fatalf("err = %v, want a ConfigError naming plugins.config.null", err)
	}
}
