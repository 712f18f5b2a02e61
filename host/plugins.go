package host

import (
	"context"
	"errors"
	"maps"
	"runtime"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/sandbox"
	"github.com/skillhost/skillhost/shared"
)

// PluginReport describes one discovered plugin.
type PluginReport struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Pinned string `json:"pinned"` // "", "match" or "mismatch"
	// Supervisor is the plugin's lean supervisor binary, if one lies
	// beside it, and SupervisorPinned its pin's state as Pinned's, with
	// "unpinned" for a pinned plugin whose supervisor binary has no pin
	// (its runs then re-execute the plugin).
	Supervisor       string `json:"supervisor,omitempty"`
	SupervisorPinned string `json:"supervisor_pinned,omitempty"`
	// OneShot is the plugin's binary for one-shot hosts, if one lies
	// beside it, and OneShotUsed whether `skillhost run` starts it: not
	// when a pin covers the plugin, since it does not cover that binary
	// (nor, whatever this says, for a run whose network is by name).
	OneShot     string        `json:"one_shot,omitempty"`
	OneShotUsed bool          `json:"one_shot_used,omitempty"`
	Info        *shared.Info  `json:"info,omitempty"`
	Probe       *shared.Probe `json:"probe,omitempty"`
	Error       string        `json:"error,omitempty"`
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
		r.pins(c, h.Config.Plugins.SHA256)
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

// pins fills in the binaries' sums and the state of their pins, each
// binary read once.
func (r *PluginReport) pins(c sandbox.Candidate, pins map[string]string) {
	sums, err := sandbox.Sums(c)
	if err != nil {
		// The supervisor binary could not be read; the plugin's own sum
		// still can be.
		sums = map[string]string{}
		if sum, err := sandbox.Sum(c.Path); err == nil {
			sums[c.Name] = sum
		}
	}
	r.SHA256, r.Pinned = sums[c.Name], pinState(pins, c.Name, sums[c.Name])
	sup := c.Name + sandbox.SupervisorPin
	if sum, ok := sums[sup]; ok {
		r.Supervisor, r.SupervisorPinned = sandbox.SupervisorPath(c), pinState(pins, sup, sum)
		if r.SupervisorPinned == "" && pins[c.Name] != "" {
			r.SupervisorPinned = "unpinned"
		}
	}
	r.OneShot, r.OneShotUsed = sandbox.OneShotBinary(c, pins)
}

// pinState is "match" or "mismatch" for a binary whose sum is pinned under
// key, else "".
func pinState(pins map[string]string, key, sum string) string {
	want, ok := pins[key]
	switch {
	case sum == "" || !ok:
		return ""
	case sandbox.PinMatches(want, sum):
		return "match"
	}
	return "mismatch"
}

// InProcessName is the strategy name reported for sandbox.enabled: false;
// --strategy none selects it for one run.
const InProcessName = sandbox.InProcess

// Strategy returns the plugin a run of an external skill uses here, and
// whether that confines scripts at all.
func (h *Host) Strategy() (name string, confine bool) {
	c := sandbox.Choose(h.sandboxPolicy(), "", false)
	return c.Name, c.Confines
}

// sandboxPolicy is the configuration's say on strategies.
func (h *Host) sandboxPolicy() sandbox.Policy {
	return sandbox.Policy{Enabled: h.Config.Sandbox.Enabled, Strategy: string(h.Config.Sandbox.Strategy)}
}

// executor picks the executor for a run and its strategy (see
// sandbox.Choose), warning when auto found nothing that confines here.
func (h *Host) executor(g grant.Grant, override string) (shared.Executor, sandbox.Choice) {
	c := sandbox.Choose(h.sandboxPolicy(), override, g.Core())
	c.ByName = g.Network && g.Egress != nil
	if c.Auto && !c.Confines {
		h.Warn("no confining sandbox plugin exists for %s; scripts run unconfined under the null plugin, bounded only by timeout and output limit", runtime.GOOS)
	}
	return h.Sandbox().ExecutorFor(c), c
}

// PinAll returns the current SHA-256 of every discovered plugin.
func (h *Host) PinAll() (map[string]string, []string, error) {
	found, warnings := h.Sandbox().Plugins()
	sums := map[string]string{}
	for _, c := range found {
		s, err := sandbox.Sums(c)
		if err != nil {
			return nil, warnings, err
		}
		maps.Copy(sums, s)
	}
	return sums, warnings, nil
}
