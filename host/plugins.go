package host

import (
	"context"
	"errors"
	"runtime"

	"github.com/skillhost/skillhost/host/sandbox"
	"github.com/skillhost/skillhost/shared"
)

// PluginReport describes one discovered plugin.
type PluginReport struct {
	Name   string        `json:"name"`
	Path   string        `json:"path"`
	SHA256 string        `json:"sha256"`
	Pinned string        `json:"pinned"` // "", "match" or "mismatch"
	Info   *shared.Info  `json:"info,omitempty"`
	Probe  *shared.Probe `json:"probe,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// Plugins starts every discovered plugin and asks it for its Info and
// Probe. A plugin that fails to start is reported, not fatal.
func (h *Host) Plugins(ctx context.Context) ([]PluginReport, []string) {
	m := h.Sandbox()
	found, warnings := m.Plugins()
	var out []PluginReport
	for _, name := range sandbox.Names(found) {
		c := found[name]
		r := PluginReport{Name: name, Path: c.Path}
		if sum, err := sandbox.Sum(c.Path); err == nil {
			r.SHA256 = sum
			if want, ok := h.Config.Plugins.SHA256[name]; ok {
				r.Pinned = "match"
				if !sandbox.PinMatches(want, sum) {
					r.Pinned = "mismatch"
				}
			}
		}
		ex := m.Executor(name)
		if info, err := ex.Info(ctx); err != nil {
			r.Error = err.Error()
			// An incompatible plugin still said what it is; show it.
			if ie := (*sandbox.IncompatibleError)(nil); errors.As(err, &ie) {
				r.Info = &ie.Info
			}
		} else {
			r.Info = &info
			if p, err := ex.Probe(ctx); err != nil {
				r.Error = err.Error()
			} else {
				r.Probe = &p
			}
		}
		out = append(out, r)
	}
	return out, warnings
}

// Strategy returns the plugin a run of an external skill uses here, and
// whether that confines scripts at all.
func (h *Host) Strategy() (name string, confine bool) {
	name, confine, _ = h.strategy("", false)
	return name, confine
}

// strategy names the executor of a run: override if set, else the
// in-process runner when the sandbox is disabled, else null for an
// honoured trust: core, else sandbox.strategy; auto means the platform's
// plugin, and auto reports that it was resolved.
func (h *Host) strategy(override string, core bool) (name string, confine, auto bool) {
	name = override
	if name == "" {
		if !h.Config.Sandbox.Enabled {
			return InProcessName, false, false
		}
		name = string(h.Config.Sandbox.Strategy)
		if core {
			name = sandbox.Null
		}
	}
	if name == sandbox.Auto {
		name, confine = sandbox.AutoFor(runtime.GOOS)
		return name, confine, true
	}
	return name, confines(name), false
}

// confines reports whether the strategy name confines scripts: every
// plugin does but null, and the in-process runner never does. It is the
// one definition strategy selection and a run's preparation share.
func confines(name string) bool { return name != sandbox.Null && name != InProcessName }

// PinAll returns the current SHA-256 of every discovered plugin.
func (h *Host) PinAll() (map[string]string, []string, error) {
	found, warnings := h.Sandbox().Plugins()
	sums := map[string]string{}
	for name, c := range found {
		sum, err := sandbox.Sum(c.Path)
		if err != nil {
			return nil, warnings, err
		}
		sums[name] = sum
	}
	return sums, warnings, nil
}
