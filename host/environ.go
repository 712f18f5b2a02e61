package host

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// passedEnv are the host variables every script receives; LC_* is matched
// by prefix. Nothing else of the host's environment reaches a script unless
// sandbox.env names it.
var passedEnv = []string{"PATH", "HOME", "LANG", "TERM", "TZ", "USER", "LOGNAME", "TMPDIR"}

// scriptEnv builds a script's environment from the host's: the allowlist,
// then sandbox.env entries (NAME passes the host value, NAME=value sets it).
func scriptEnv(host []string, extra []string) []string {
	out := map[string]string{}
	var keys []string // in order of first appearance; a later value wins
	set := func(k, v string) {
		if _, ok := out[k]; !ok {
			keys = append(keys, k)
		}
		out[k] = v
	}
	hostValue := func(name string) (string, bool) {
		for i := len(host) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(host[i], "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
	for _, kv := range host {
		if k, v, ok := strings.Cut(kv, "="); ok && isPassed(k) {
			set(k, v)
		}
	}
	for _, e := range extra {
		if k, v, ok := strings.Cut(e, "="); ok {
			set(k, v)
		} else if v, ok := hostValue(e); ok {
			set(e, v)
		}
	}
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+out[k])
	}
	return env
}

func isPassed(name string) bool {
	return strings.HasPrefix(name, "LC_") || slices.Contains(passedEnv, name)
}

// lookPath finds an executable named file on the PATH of env, the way a
// shell would for the script; the host's own PATH does not matter.
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	path := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			path = kv[len("PATH="):]
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			if !filepath.IsAbs(p) {
				if abs, err := filepath.Abs(p); err == nil {
					p = abs
				}
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on the scripts' PATH (%s)", file, path)
}
