package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzConfig feeds an arbitrary configuration file and one arbitrary
// SKILLHOST_ environment override through the loader's steps (decode,
// override, validate). Whatever the input, it must not panic, and every
// error must be a *Error naming where the bad value came from: the file or
// the variable.
func FuzzConfig(f *testing.F) {
	f.Add([]byte("sandbox:\n  strategy: landlock\n  timeout: 30\n  output_limit: 1MiB\n"), "SANDBOX__TIMEOUT", "90s")
	f.Add([]byte("skills:\n  roots: [a, b]\nplugins:\n  sha256: {null: abc}\n"), "SKILLS__ROOTS", "x,y,,z")
	f.Add([]byte("sandbox:\n  strategy: null\n"), "SANDBOX__LIMITS__MEMORY", "[1, 2]")
	f.Add([]byte("match:\n  threshold: 2\n  limit: -1\n"), "MATCH__EMBEDDING__X", "1")
	f.Add([]byte("- a\n- b\n"), "SANDBOX__NETWORK", "maybe")
	f.Add([]byte("sandbox: &a {timeout: *a}\n"), "PLUGINS__AUTO_MTLS", "off")
	f.Fuzz(func(t *testing.T, file []byte, name, value string) {
		const path = "/fuzz/config.yaml"
		c := Default()
		check := func(err error, source string) bool {
			if err == nil {
				return true
			}
			var ce *Error
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Source, source) || err.Error() == ce.Source+": " {
				t.Fatalf("error %q (%T) does not name %s", err, err, source)
			}
			return false
		}
		if !check(c.decodeFile(path, file), path) {
			return
		}
		if !check(c.applyEnv([]string{EnvPrefix + name + "=" + value}), "environment variable "+EnvPrefix) {
			return
		}
		_ = c.Validate() // must not panic; its errors are wrapped by Load
	})
}
