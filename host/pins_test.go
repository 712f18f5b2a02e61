package host

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPin(t *testing.T) {
	noUserConfig(t)
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	writeFiles(t, dir, map[string]string{
		"plugins/skillhost-sandbox-fake": "#!/bin/sh\nexit 1\n",
		"plugins/skillhost-sandbox-text": "not executable",
		// A comment and another plugin's pin must survive.
		"config.yaml": "# mine\nplugins:\n  dirs: [" + plugins + "]\n  sha256:\n    other: " + strings.Repeat("a", 64) + "\n",
	})
	if err := os.Chmod(filepath.Join(plugins, "skillhost-sandbox-fake"), 0o755); err != nil {
		t.Fatal(err)
	}
	var warnings strings.Builder
	cfg := filepath.Join(dir, "config.yaml")
	h, err := Open(Options{ConfigPath: cfg, Warnings: &warnings})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	pins, err := h.Pin()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("#!/bin/sh\nexit 1\n"))
	want := hex.EncodeToString(sum[:])
	if pins.Config != cfg || len(pins.Sums) != 1 || pins.Sums["fake"] != want {
		t.Errorf("Pin = %+v, want fake %s in %s", pins, want, cfg)
	}
	if !strings.Contains(warnings.String(), "skillhost-sandbox-text is not executable") {
		t.Errorf("discovery warnings not reported: %q", warnings.String())
	}
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# mine", "other: " + strings.Repeat("a", 64), want} {
		if !strings.Contains(string(text), s) {
			t.Errorf("config lacks %q:\n%s", s, text)
		}
	}
	// A fresh host reads the pin back.
	h2, err := Open(Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if got := h2.Config.Plugins.SHA256["fake"]; got != want {
		t.Errorf("pin read back as %q", got)
	}
}

// With no plugin found Pin fails and writes nothing; with no
// configuration file it creates the default one.
func TestPinDefaultConfig(t *testing.T) {
	noUserConfig(t)
	dir := t.TempDir()
	t.Setenv("SKILLHOST_PLUGINS__DIRS", dir)
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "skillhost", "config.yaml")
	h, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Pin(); err == nil || !strings.Contains(err.Error(), "no sandbox plugins found in "+dir) {
		t.Fatalf("Pin with no plugins: %v", err)
	}
	if _, err := os.Stat(cfg); !os.IsNotExist(err) {
		t.Errorf("a configuration was written: %v", err)
	}

	writeFiles(t, dir, map[string]string{"skillhost-sandbox-fake": "x"})
	if err := os.Chmod(filepath.Join(dir, "skillhost-sandbox-fake"), 0o755); err != nil {
		t.Fatal(err)
	}
	h2, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	pins, err := h2.Pin()
	if err != nil || pins.Config != cfg || len(pins.Sums) != 1 {
		t.Fatalf("Pin = %+v, %v; want the default file %s", pins, err, cfg)
	}
	if _, err := os.Stat(cfg); err != nil {
		t.Errorf("no configuration written: %v", err)
	}
}

// Pin with names pins only those plugins and reports the pin each had
// before; a name that is no plugin is a usage error and writes nothing.
func TestPinNamed(t *testing.T) {
	noUserConfig(t)
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	old := strings.Repeat("0", 64)
	writeFiles(t, dir, map[string]string{
		"plugins/skillhost-sandbox-one": "#!/bin/sh\nexit 1\n",
		"plugins/skillhost-sandbox-two": "#!/bin/sh\nexit 2\n",
		"config.yaml":                   "plugins:\n  dirs: [" + plugins + "]\n  sha256:\n    one: " + old + "\n",
	})
	for _, n := range []string{"one", "two"} {
		if err := os.Chmod(filepath.Join(plugins, "skillhost-sandbox-"+n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "config.yaml")
	open := func() *Host {
		h, err := Open(Options{ConfigPath: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	sum := func(s string) string { b := sha256.Sum256([]byte(s)); return hex.EncodeToString(b[:]) }
	one, two := sum("#!/bin/sh\nexit 1\n"), sum("#!/bin/sh\nexit 2\n")

	before, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = open().Pin("one", "nope")
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `no sandbox plugin "nope" to pin`) || !strings.Contains(err.Error(), "found: one, two") {
		t.Fatalf("Pin of an unknown name: %v, want a *UsageError naming it and the plugins found", err)
	}
	if after, _ := os.ReadFile(cfg); string(after) != string(before) {
		t.Errorf("a failed Pin wrote the configuration:\n%s", after)
	}

	pins, err := open().Pin("one")
	if err != nil {
		t.Fatal(err)
	}
	if len(pins.Sums) != 1 || pins.Sums["one"] != one || pins.Previous["one"] != old || !pins.Changed("one") {
		t.Errorf("Pin(one) = %+v, want one %s -> %s only", pins, old, one)
	}
	h := open()
	if got := h.Config.Plugins.SHA256; got["one"] != one || got["two"] != "" {
		t.Errorf("pins read back as %v, want only one", got)
	}

	pins, err = h.Pin()
	if err != nil {
		t.Fatal(err)
	}
	if pins.Sums["one"] != one || pins.Sums["two"] != two || pins.Changed("one") || !pins.Changed("two") || pins.Previous["two"] != "" {
		t.Errorf("Pin() = %+v, want one unchanged and two newly pinned", pins)
	}
}
