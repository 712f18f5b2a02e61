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
	hostVals := map[string]string{}
	var order []string
	for _, kv := range host {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, seen := hostVals[k]; !seen {
			order = append(order, k)
		}
		hostVals[k] = v
	}
	out := map[string]string{}
	var keys []string
	set := func(k, v string) {
		if _, ok := out[k]; !ok {
			keys = append(keys, k)
		}
		out[k] = v
	}
	for _, k := range order {
		if isPassed(k) {
			set(k, hostVals[k])
		}
	}
	for _, e := range extra {
		if k, v, ok := strings.Cut(e, "="); ok {
			set(k, v)
		} else if v, ok := hostVals[e]; ok {
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
