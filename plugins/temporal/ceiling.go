package temporal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/egress"
)

// Ceiling is the most a worker lets a job have, whatever its grant says:
// anyone who can start workflows on the task queue can send a job, so a
// worker trusts its own flags, not the job. A job that asks for more is
// refused before anything runs. The zero Ceiling allows no host path and
// no network, and any timeout.
type Ceiling struct {
	// FSRead and FSWrite are the host paths (with --shared-paths) a run
	// may read, and write; a path to write may be read too. Each is
	// absolute with its symlinks resolved (see ParsePaths).
	FSRead, FSWrite []string
	// Network: All allows any network grant (the whole network, or any
	// host by name); else Hosts are the host patterns a grant by name
	// must stay within (egress's patterns: "*" and the name patterns
	// cover names only, an IP literal only itself). Neither: no network.
	Network struct {
		All   bool
		Hosts []egress.Pattern
	}
	// MaxTimeout, if set, is the longest timeout a job may have; a job
	// with none (unbounded) is over it.
	MaxTimeout time.Duration
}

// systemRoots are trees every local strategy lets a run read and execute
// (the system's programs and libraries): an interpreter tree of the job
// beneath them adds nothing, so it needs no --fs-read.
var systemRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// ParsePaths reads paths as the configuration's sandbox.fs_read and
// fs_write do: absolute, ~ or ~/... (the worker's home), or relative to
// the working directory, each resolved through its symlinks (the part that
// does not exist yet as written), so that a job's path is compared with
// where the worker's paths really are.
func ParsePaths(flag string, list []string) ([]string, error) {
	var out []string
	for _, p := range list {
		if strings.HasPrefix(p, "~") {
			rest := p[1:]
			if rest != "" && rest[0] != '/' {
				return nil, fmt.Errorf("%s %s: ~user paths are not supported", flag, p)
			}
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", flag, p, err)
			}
			p = home + rest
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, p, err)
		}
		r, err := realpath(abs)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, p, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ParseNetwork reads --network values: "true" (any network), "false" or
// "none" (no network, the default), or host patterns as in the
// configuration's network.allow ("api.example.com", "*.example.com",
// "10.0.0.5:443", "*" for any host by name).
func (c *Ceiling) ParseNetwork(list []string) error {
	for _, s := range list {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "all":
			c.Network.All = true
			continue
		case "false", "none", "":
			continue
		}
		p, err := egress.ParsePattern(s)
		if err != nil {
			return fmt.Errorf("--network: %w", err)
		}
		c.Network.Hosts = append(c.Network.Hosts, p)
	}
	return nil
}

// check returns why job (as it arrived) is over the ceiling of worker
// name, naming the ceiling and the flag that would allow it; "" if it is
// within. shared says whether the worker uses the job's host paths
// (--shared-paths): without it, a run gets the worker's own scratch
// directories, which no ceiling bounds.
func (c Ceiling) check(name string, req shared.Request, sharedPaths bool) string {
	g := req.Grant
	if c.MaxTimeout > 0 && (g.Timeout <= 0 || g.Timeout > c.MaxTimeout) {
		asked := "a run with no timeout"
		if g.Timeout > 0 {
			asked = "a timeout of " + g.Timeout.String()
		}
		return fmt.Sprintf("worker %s refuses %s: its ceiling is --max-timeout %s; lower the skill's timeout (sandbox.timeout, or skills.grants.NAME.timeout), or start the worker with a larger --max-timeout",
			name, asked, c.MaxTimeout)
	}
	if why := c.checkNetwork(name, g); why != "" {
		return why
	}
	if !sharedPaths {
		return ""
	}
	for _, p := range g.FSWrite {
		if why := c.checkPath(name, p, "write", c.FSWrite, "--fs-write", "--fs-write"); why != "" {
			return why
		}
	}
	if req.Stage != "" {
		if why := c.checkPath(name, req.Stage, "stage writes in", c.FSWrite, "--fs-write", "--fs-write"); why != "" {
			return why
		}
	}
	readable := append(append([]string{}, c.FSRead...), c.FSWrite...)
	reads := append([]string{req.SkillDir}, g.FSRead...)
	for _, p := range req.ExecPaths {
		if real, err := realpath(filepath.Clean(p)); err != nil || !filepath.IsAbs(p) ||
			!shared.UnderAny(filepath.Clean(p), systemRoots) || !shared.UnderAny(real, systemRoots) {
			reads = append(reads, p)
		}
	}
	for _, p := range reads {
		if why := c.checkPath(name, p, "read", readable, "--fs-read", "--fs-read and --fs-write"); why != "" {
			return why
		}
	}
	return ""
}

// checkPath says why path, as the job wrote it and as it resolves on this
// worker, is not beneath one of roots, the ceiling of flags; flag would
// allow it.
func (c Ceiling) checkPath(name, path, verb string, roots []string, flag, flags string) string {
	if path == "" {
		return ""
	}
	if !filepath.IsAbs(path) {
		return fmt.Sprintf("worker %s refuses to let the run %s %q: not an absolute path", name, verb, path)
	}
	clean := filepath.Clean(path)
	real, err := realpath(clean)
	if err != nil {
		return fmt.Sprintf("worker %s refuses to let the run %s %s: %v", name, verb, path, err)
	}
	if shared.UnderAny(clean, roots) && shared.UnderAny(real, roots) {
		return ""
	}
	shown := clean
	if real != clean {
		shown = fmt.Sprintf("%s (%s on this worker)", clean, real)
	}
	ceiling := "allows no host path there"
	if len(roots) > 0 {
		ceiling = fmt.Sprintf("allows only %s", strings.Join(roots, ", "))
	}
	return fmt.Sprintf("worker %s refuses to let the run %s %s: its ceiling (%s) %s; start the worker with %s %s to allow it, or narrow the skill's grant",
		name, verb, shown, flags, ceiling, flag, real)
}

// checkNetwork says why g's network is over the ceiling.
func (c Ceiling) checkNetwork(name string, g shared.Grant) string {
	if !g.Network || c.Network.All {
		return ""
	}
	allowed := "no network"
	if len(c.Network.Hosts) > 0 {
		allowed = "only " + c.networkString()
	}
	if g.Egress == nil {
		return fmt.Sprintf("worker %s refuses the whole network: its ceiling (--network) allows %s; start the worker with --network true to allow it, or grant the skill hosts by name (sandbox.network.allow)",
			name, allowed)
	}
	for _, s := range g.Egress.Allow {
		p, err := egress.ParsePattern(s)
		if err != nil {
			return fmt.Sprintf("worker %s refuses the network grant: %v", name, err)
		}
		if !c.covers(p) {
			return fmt.Sprintf("worker %s refuses network access to %s: its ceiling (--network) allows %s; start the worker with --network %s to allow it, or narrow the skill's network grant",
				name, p, allowed, p)
		}
	}
	return ""
}

// covers reports whether every host and port p matches is within one of
// the ceiling's patterns, as the egress policy matches them: "*" and name
// patterns cover names only, a literal only the same address.
func (c Ceiling) covers(p egress.Pattern) bool {
	for _, w := range c.Network.Hosts {
		if p.Literal() != w.Literal() {
			continue
		}
		if i, ok := egress.Intersect(p, w); ok && i.Host == p.Host && i.Wildcard == p.Wildcard && i.Port == p.Port &&
			i.Addr.Unmap() == p.Addr.Unmap() {
			return true
		}
	}
	return false
}

// networkString writes the network ceiling as --network reads it.
func (c Ceiling) networkString() string {
	if c.Network.All {
		return "true"
	}
	if len(c.Network.Hosts) == 0 {
		return "none"
	}
	hosts := make([]string, len(c.Network.Hosts))
	for i, h := range c.Network.Hosts {
		hosts[i] = h.String()
	}
	return strings.Join(hosts, ",")
}

// maxLinks matches the kernel's limit on links followed in one lookup.
const maxLinks = 40

// realpath resolves the symlinks of the absolute path p as the kernel
// would: through the deepest existing ancestor, with the components that
// do not exist appended as written.
func realpath(p string) (string, error) {
	links := 0
	resolved := "/"
	rest := strings.Split(p, "/")
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			for _, r := range rest {
				if r == ".." {
					return "", fmt.Errorf("%s does not exist, so the .. after it cannot be resolved", next)
				}
			}
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, nil
}
