package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/shared"
)

func (a *app) doctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, skills, plugins and this machine's confinement features",
		Long:  "Doctor ends with a one-line verdict and exits 1 when runs would not be confined as configured.",
		Args:  args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			a.allowMissingRoots = true
			h, err := a.open()
			if err != nil {
				return err
			}
			defer h.Close()
			d := examine(context.Background(), h)
			if a.jsonOut {
				if err := a.printJSON(map[string]any{
					"config": h.Config.Source, "skill_roots": h.Catalog.Roots(), "skills": len(d.skills),
					"skill_warnings": nonNil(d.skillWarnings), "platform": map[string]string{"os": d.platform}, "strategy": d.strategy,
					"plugins": d.reports, "plugin_warnings": nonNil(d.pluginWarnings), "ok": d.ok, "verdict": d.verdict,
					"missing_roots": nonNil(d.missing), "tools": len(d.predictions), "failing_tools": nonNilPredictions(d.failing),
					"unknown_grants": nonNil(d.unknownGrants), "ceiling_warnings": nonNil(d.ceilingWarnings), "network_warnings": nonNil(h.NetworkWarnings()),
					"broken_skills": brokenJSON(d.broken), "program_warnings": nonNil(d.programWarnings),
				}); err != nil {
					return err
				}
			} else {
				d.writeText(a.stdout, h)
			}
			if !d.ok {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
}

// examination is what doctor found.
type examination struct {
	platform, strategy                     string
	reports                                []host.PluginReport
	pluginWarnings, skillWarnings, missing []string
	unknownGrants, ceilingWarnings         []string
	programWarnings                        []string
	skills                                 []*skill.Skill
	predictions, failing                   []host.Prediction
	broken                                 []catalog.Broken
	ok                                     bool
	verdict                                string
}

// examine checks the configuration, the skills, the plugins and every
// tool, and reaches a verdict.
func examine(ctx context.Context, h *host.Host) examination {
	// What this machine can confine is each plugin's to say (its Probe);
	// the host only names the platform.
	d := examination{platform: runtime.GOOS + "/" + runtime.GOARCH}
	d.reports, d.pluginWarnings = h.Plugins(ctx)
	name, confine := h.Strategy()
	// A fleet with no worker on its queue (the temporal plugin's probe
	// says "workers: none: ..."): a warning, and a problem when it is the
	// strategy, as every run would wait and fail.
	idle := ""
	for _, r := range d.reports {
		if r.Probe != nil && strings.HasPrefix(r.Probe.Details["workers"], "none:") {
			why := strings.TrimPrefix(r.Probe.Details["workers"], "none: ")
			d.pluginWarnings = append(d.pluginWarnings, fmt.Sprintf("%s: %s", r.Name, why))
			if r.Name == name {
				idle = why
			}
		}
	}
	d.skills = h.Catalog.All()
	d.skillWarnings = h.Catalog.Warnings()
	d.broken = h.Catalog.Broken()
	d.strategy = name
	d.ok, d.verdict = diagnose(h, name, confine, d.reports)
	d.missing = h.MissingRoots()
	if d.ok {
		d.predictions = h.PredictRuns(ctx)
		for _, p := range d.predictions {
			if !p.OK {
				d.failing = append(d.failing, p)
			}
		}
	}
	switch {
	case !d.ok:
	case idle != "":
		d.ok, d.verdict = false, fmt.Sprintf("PROBLEM: the %s strategy has no worker: %s", name, idle)
	case len(d.missing) > 0:
		d.ok, d.verdict = false, fmt.Sprintf("PROBLEM: skill root %s does not exist; fix skills.roots or --skills", strings.Join(d.missing, ", "))
	case len(d.skills) == 0:
		d.ok, d.verdict = false, fmt.Sprintf("PROBLEM: no skills loaded from %s; put skill directories there or set skills.roots", strings.Join(h.Catalog.Roots(), ", "))
	case len(d.broken) > 0 && strings.HasPrefix(d.verdict, "OK"):
		b := d.broken[0]
		d.ok, d.verdict = false, fmt.Sprintf("PROBLEM: %d skills failed to load: %s: %v", len(d.broken), b.Dir, b.Err)
	case len(d.failing) > 0:
		f := d.failing[0]
		d.ok, d.verdict = false, fmt.Sprintf("PROBLEM: %d of %d tools would fail to start: %s/%s: %s; fix: %s", len(d.failing), len(d.predictions), f.Skill, f.Tool, f.Problem, f.Fix)
	}
	// The programs scripts run by name are looked for on the scripts' PATH.
	d.programWarnings = h.MissingPrograms()
	if len(d.broken) > 0 && !strings.HasPrefix(d.verdict, "PROBLEM") {
		// A warning stands, and says so too.
		d.verdict += fmt.Sprintf("; %d skills failed to load (listed above)", len(d.broken))
	}
	if len(d.programWarnings) > 0 && !strings.HasPrefix(d.verdict, "PROBLEM") {
		d.verdict += fmt.Sprintf("; %d programs that scripts run are not on the scripts' PATH (listed above)", len(d.programWarnings))
	}
	d.unknownGrants = h.UnknownGrants()
	d.ceilingWarnings = h.CeilingWarnings()
	return d
}

// writeText writes the examination as doctor's text report.
func (d examination) writeText(w io.Writer, h *host.Host) {
	src := h.Config.Source
	if src == "" {
		src = "built-in defaults (no configuration file)"
	}
	fmt.Fprintf(w, "config:    %s\n", src)
	fmt.Fprintf(w, "skills:    %d loaded, %d warnings, from:\n", len(d.skills), len(d.skillWarnings))
	for _, r := range h.Catalog.Roots() {
		state := ""
		if _, err := os.Stat(r); err != nil {
			state = " (missing)"
		}
		fmt.Fprintf(w, "             %s%s\n", r, state)
	}
	for _, b := range d.broken {
		fmt.Fprintf(w, "           failed to load: %s: %s\n", skill.Printable(b.Dir), skill.Printable(b.Err.Error()))
	}
	fmt.Fprintf(w, "platform:  %s\n", d.platform)
	fmt.Fprintf(w, "sandbox:   enabled %v, strategy %s -> %s\n", h.Config.Sandbox.Enabled, h.Config.Sandbox.Strategy, d.strategy)
	fmt.Fprintf(w, "plugins:   %s\n", strings.Join(h.Sandbox().Dirs(), ", "))
	for _, r := range d.reports {
		line := r.Name
		var details []string
		if r.Probe != nil {
			line += fmt.Sprintf(": %s, %s", r.Probe.Status, r.Probe.Reason)
			details = slices.Sorted(maps.Keys(r.Probe.Details))
		}
		if r.Error != "" {
			line += ": error: " + r.Error
		}
		fmt.Fprintf(w, "             %s\n", line)
		for _, k := range details {
			fmt.Fprintf(w, "               %s: %s\n", k, r.Probe.Details[k])
		}
	}
	for _, pw := range d.pluginWarnings {
		fmt.Fprintf(w, "             warning: %s\n", pw)
	}
	if d.predictions != nil {
		fmt.Fprintf(w, "tools:     %d checked, %d would fail to start\n", len(d.predictions), len(d.failing))
		for _, f := range d.failing {
			fmt.Fprintf(w, "             %s/%s: %s\n               fix: %s\n", skill.Printable(f.Skill), skill.Printable(f.Tool), skill.Printable(f.Problem), f.Fix)
		}
	}
	for _, pw := range d.programWarnings {
		fmt.Fprintf(w, "programs:  warning: %s\n", skill.Printable(pw))
	}
	for _, g := range d.unknownGrants {
		fmt.Fprintf(w, "grants:    %s\n", skill.Printable(g))
	}
	for _, c := range d.ceilingWarnings {
		fmt.Fprintf(w, "ceiling:   warning: %s\n", c)
	}
	// Hosts a skill is given that the ceiling withholds (a run shows only
	// a name that did not resolve).
	for _, n := range h.NetworkWarnings() {
		fmt.Fprintf(w, "network:   warning: %s\n", skill.Printable(n))
	}
	fmt.Fprintf(w, "verdict:   %s\n", skill.Printable(d.verdict))
}

// diagnose states in one line whether runs are confined as configured.
func diagnose(h *host.Host, name string, confine bool, reports []host.PluginReport) (bool, string) {
	if name == host.InProcessName {
		return true, "sandbox disabled: scripts run in-process, unconfined, bounded by timeout and output limit"
	}
	for _, r := range reports {
		if r.Name != name {
			continue
		}
		switch {
		case r.Error != "": // a pin mismatch too: the plugin is refused before it starts
			return false, fmt.Sprintf("PROBLEM: the %s plugin does not work: %s", name, r.Error)
		case r.Probe.Status != shared.Healthy && r.Probe.BestEffort:
			return true, fmt.Sprintf("WARNING: the %s plugin is %s here (%s) and runs scripts best effort, as its settings (plugins.config.%s) allow: each result lists what was not enforced",
				name, r.Probe.Status, r.Probe.Reason, name)
		case r.Probe.Status != shared.Healthy:
			return false, fmt.Sprintf("PROBLEM: the %s plugin is %s here: %s", name, r.Probe.Status, r.Probe.Reason)
		case !confine:
			return true, fmt.Sprintf("WARNING: scripts run under %s, which does not confine them (only timeout and output limit)", name)
		}
		return true, fmt.Sprintf("OK: scripts are confined by %s (%s)", name, r.Probe.Reason)
	}
	return false, fmt.Sprintf("PROBLEM: the %s plugin is not installed in %s; run make build, pick another strategy, or set sandbox.enabled: false",
		name, strings.Join(h.Sandbox().Dirs(), ", "))
}

func nonNilPredictions(p []host.Prediction) []host.Prediction {
	if p == nil {
		return []host.Prediction{}
	}
	return p
}

// brokenJSON lists the skills that failed to load as {dir, error}.
func brokenJSON(bs []catalog.Broken) []map[string]string {
	out := []map[string]string{}
	for _, b := range bs {
		out = append(out, map[string]string{"dir": b.Dir, "error": b.Err.Error()})
	}
	return out
}
