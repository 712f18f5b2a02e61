package shared

import (
	"strconv"
	"strings"
)

// WithEnv returns a copy of env (NAME=value entries) with name set to
// value: earlier entries for name go, the new one comes last.
func WithEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// EnvValue returns the value of name in env, the last entry winning as it
// does for a process, or "".
func EnvValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// ProcessorsGiven reports whether v, a value of GOMAXPROCS, is one the Go
// runtime takes: a positive number of processors. The host passes its own
// on to plugins; a process given one keeps it instead of going to one
// processor, and one the runtime ignores is ignored there too.
func ProcessorsGiven(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n > 0
}
