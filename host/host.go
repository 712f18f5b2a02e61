// Package host is skillhost's host side: it ties the configuration, the
// skill catalog, grants and the sandbox executors together behind the few
// calls the CLI (or an embedding program) needs.
//
// An embedding program opens a Host, activates skills for a message, runs
// tools with an events callback (see package events) and closes the Host to
// stop the plugins; the package Example shows it end to end.
package host

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/sandbox"
	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/host/term"
	"github.com/skillhost/skillhost/internal/procs"
)

// Options configure Open.
type Options struct {
	// ConfigPath is --config; empty means $SKILLHOST_CONFIG or the default
	// location.
	ConfigPath string
	// SkillRoots, when set, replace skills.roots (--skills).
	SkillRoots []string
	// Warnings receives one line per warning; nil discards them.
	Warnings io.Writer
	// LogLevel is the hclog level for plugin logs ("warn" if empty).
	LogLevel string
	// OneShot says the caller will make at most one call before Close
	// (the CLI's run), so plugins start nothing ahead of time for a next,
	// nor does this host's in-process runner (other hosts of the program
	// keep their own setting).
	OneShot bool
	// Verbose prints every catalog warning instead of a summary line.
	Verbose bool
	// PluginDirs, when set, replace plugins.dirs: where sandbox plugins
	// are looked for. Unset and unconfigured, they are looked for next to
	// the running executable, in the bin/ of the Go module the working
	// directory is in, and in $XDG_DATA_HOME/skillhost/plugins.
	PluginDirs []string
}

// Host is an opened skillhost.
type Host struct {
	Config  *config.Config
	Catalog *catalog.Catalog

	env      grant.Env
	warnings io.Writer
	warnMu   sync.Mutex
	warned   map[string]bool
	logLevel string
	oneShot  bool
	// pluginDirs is Options.PluginDirs.
	pluginDirs []string
	// defaultRoots is set when no root was configured, so missing ones are
	// not a problem.
	defaultRoots bool
	verbose      bool
	// configPath is Options.ConfigPath: where Pin writes when no
	// configuration file was read.
	configPath string

	sandboxOnce sync.Once
	sandbox     *sandbox.Manager

	interp interpCache

	matchOnce sync.Once
	engine    *match.Engine
	engineErr error

	// timing is the breakdown SKILLHOST_TRACE=timing asks of a one-shot
	// run (see timing.go); nil otherwise.
	timing *timing
}

// Open loads the configuration and prepares the catalog (which reads
// nothing until first use).
func Open(opts Options) (*Host, error) {
	var tm *timing
	if opts.OneShot && traceTiming(os.Getenv(TraceEnv)) {
		tm = newTiming()
	}
	cfg, err := config.Load(opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	env := grant.Env{Cwd: cwd, Home: home}
	roots := append([]string(nil), opts.SkillRoots...)
	if len(roots) == 0 {
		roots = append(roots, cfg.Skills.Roots...)
	}
	catOpts := []catalog.Option{catalog.ParseOptions(skill.Options{RequireExec: cfg.Scripts.RequireExec})}
	defaultRoots := len(roots) == 0
	if len(roots) == 0 {
		roots = catalog.DefaultRoots(home, cwd)
		catOpts = append(catOpts, catalog.IgnoreMissingRoots())
	}
	for i, r := range roots {
		if p, err := grant.Resolve(r, env); err == nil {
			roots[i] = p
		} else {
			roots[i] = filepath.Clean(r)
		}
	}
	w := opts.Warnings
	if w == nil {
		w = io.Discard
	}
	level := opts.LogLevel
	if level == "" {
		level = "warn"
	}
	h := &Host{Config: cfg, Catalog: catalog.New(roots, catOpts...), env: env, warnings: w, warned: map[string]bool{}, logLevel: level, oneShot: opts.OneShot, defaultRoots: defaultRoots, verbose: opts.Verbose}
	h.configPath = opts.ConfigPath
	h.pluginDirs = opts.PluginDirs
	h.timing = tm
	for _, d := range append(cfg.Warnings, cfg.Deprecations...) {
		h.Warn("%s", d)
	}
	tm.mark("configuration load (and the rest of Open)")
	return h, nil
}

// Warn writes a warning once per message.
func (h *Host) Warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.warnMu.Lock()
	defer h.warnMu.Unlock()
	if h.warned[msg] {
		return
	}
	h.warned[msg] = true
	// A warning may name a skill's file or quote its script's output:
	// nothing in it acts on the terminal.
	fmt.Fprintln(h.warnings, "warning: "+term.Printable(msg))
}

// CatalogWarnings writes the catalog's load warnings: with Verbose each of
// them, otherwise one summary line pointing to skillhost validate.
func (h *Host) CatalogWarnings() {
	warnings := h.Catalog.Warnings()
	if len(warnings) == 0 {
		return
	}
	if h.verbose {
		for _, w := range warnings {
			h.Warn("%s", w)
		}
		return
	}
	if line := summary(h.Catalog.All(), warnings); line != "" {
		h.Warn("%s", line)
	}
}

// summary condenses catalog warnings into one line: how many skills could
// not be loaded, how many have warnings, and how many scripts are not
// tools.
func summary(skills []*skill.Skill, warnings []string) string {
	var withWarnings, count, skipped, code int
	for _, s := range skills {
		if len(s.Warnings) > 0 {
			withWarnings++
			count += len(s.Warnings)
		}
		skipped += s.Skipped
		code += s.CodeNotTools()
	}
	other := len(warnings) - count
	var parts []string
	if other > 0 {
		parts = append(parts, plural(other, "skill directory or root", "skill directories or roots")+" skipped")
	}
	if withWarnings > 0 {
		part := fmt.Sprintf("%s %s %s", plural(withWarnings, "skill", "skills"), pick(withWarnings == 1, "has", "have"), plural(count, "warning", "warnings"))
		if skipped > 0 {
			part += fmt.Sprintf(" (%s not tools)", plural(skipped, "script", "scripts"))
		}
		parts = append(parts, part)
	}
	if code > skipped {
		// Code that is rightly not a tool (a library, a guard that
		// refuses) is no warning, but is never dropped in silence.
		parts = append(parts, fmt.Sprintf("%s under scripts/ %s (libraries or modules that refuse to run)",
			plural(code-skipped, "code file", "code files"), pick(code-skipped == 1, "is not a tool", "are not tools")))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "; skillhost validate or --verbose for details"
}

func plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, pick(n == 1, one, many))
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// Sandbox returns the plugin manager, creating it on first use.
func (h *Host) Sandbox() *sandbox.Manager {
	h.sandboxOnce.Do(func() {
		pc := h.Config.Plugins
		dirs, strict := pc.Dirs, true
		if len(h.pluginDirs) > 0 {
			dirs = h.pluginDirs
		}
		if len(dirs) == 0 {
			dirs, strict = sandbox.DefaultDirs(), false
		}
		h.sandbox = sandbox.NewManager(sandbox.Options{
			Dirs:         dirs,
			StrictDirs:   strict,
			Pins:         pc.SHA256,
			AutoMTLS:     pc.AutoMTLS,
			OneShot:      h.oneShot,
			StartTimeout: time.Duration(pc.StartTimeout),
			Logger: hclog.New(&hclog.LoggerOptions{
				Name: "skillhost", Output: h.warnings, Level: hclog.LevelFromString(h.logLevel),
			}),
			Env:         pluginEnv(os.Environ()),
			Configs:     pluginConfigs(pc.Config),
			HostVersion: Version,
			Trace:       h.timing.traceFunc(),
		})
	})
	return h.sandbox
}

// pluginConfigs returns each plugin's settings as JSON; Validate already
// refused settings without a JSON form.
func pluginConfigs(in map[string]config.PluginConfig) map[string][]byte {
	out := make(map[string][]byte, len(in))
	for name, pc := range in {
		if doc, err := pc.JSON(); err == nil && !pc.Empty() {
			out[name] = doc
		}
	}
	return out
}

// pluginEnv is the environment of plugin processes: only what they need to
// find programs and temporary space. Scripts get their own environment in
// each request.
func pluginEnv(host []string) []string {
	var env []string
	for _, kv := range host {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		// SSL_CERT_FILE and SSL_CERT_DIR are the trust store a plugin's
		// egress proxy verifies upstream hosts against, as Go reads it; a
		// GOMAXPROCS given to the host is meant for its plugins too.
		case "PATH", "TMPDIR", "GORACE", "SSL_CERT_FILE", "SSL_CERT_DIR", "GOMAXPROCS":
			env = append(env, kv)
		}
	}
	return env
}

// WaitOnOneProcessor runs the process's Go code on one processor from now
// on, unless GOMAXPROCS in its environment is a number the runtime took:
// for a process that spends its time waiting on plugins and scripts (the
// CLI's run, mcp on stdio). Parsing a catalog and measuring the matcher still get every
// processor while they run. See internal/procs.
func WaitOnOneProcessor() { procs.Wait() }

// Close stops the plugin processes the host started.
func (h *Host) Close() {
	h.timing.mark("output (the result written out)")
	if h.sandbox != nil {
		h.sandbox.Close()
	}
	if h.timing != nil {
		h.timing.children()
		h.timing.write(h.warnings)
	}
}
