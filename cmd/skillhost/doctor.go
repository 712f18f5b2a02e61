package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
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
			ctx := context.Background()
			// What this machine can confine is each plugin's to say (its
			// Probe, below); the host only names the platform.
			plat := runtime.GOOS + "/" + runtime.GOARCH
			reports, pluginWarnings := h.Plugins(ctx)
			skills := h.Catalog.All()
			skillWarnings := h.Catalog.Warnings()
			name, confine := h.Strategy()
			ok, verdict := diagnose(h, name, confine, reports)
			missing := h.MissingRoots()
			var predictions, failing []host.Prediction
			if ok {
				predictions = h.PredictRuns(ctx)
				for _, p := range predictions {
					if !p.OK {
						failing = append(failing, p)
					}
				}
			}
			switch {
			case !ok:
			case len(missing) > 0:
				ok, verdict = false, fmt.Sprintf("PROBLEM: skill root %s does not exist; fix skills.roots or --skills", strings.Join(missing, ", "))
			case len(skills) == 0:
				ok, verdict = false, fmt.Sprintf("PROBLEM: no skills loaded from %s; put skill directories there or set skills.roots", strings.Join(h.Catalog.Roots(), ", "))
			case len(failing) > 0:
				f := failing[0]
				ok, verdict = false, fmt.Sprintf("PROBLEM: %d of %d tools would fail to start: %s/%s: %s; fix: %s", len(failing), len(predictions), f.Skill, f.Tool, f.Problem, f.Fix)
			}
			unknownGrants := h.UnknownGrants()
			ceilingWarnings := h.CeilingWarnings()
			if a.jsonOut {
				if err := a.printJSON(map[string]any{
					"config": h.Config.Source, "skill_roots": h.Catalog.Roots(), "skills": len(skills),
					"skill_warnings": nonNil(skillWarnings), "platform": map[string]string{"os": plat}, "strategy": name,
					"plugins": reports, "plugin_warnings": nonNil(pluginWarnings), "ok": ok, "verdict": verdict,
					"missing_roots": nonNil(missing), "tools": len(predictions), "failing_tools": nonNilPredictions(failing),
					"unknown_grants": nonNil(unknownGrants), "ceiling_warnings": nonNil(ceilingWarnings),
				}); err != nil {
					return err
				}
			} else {
				w := a.stdout
				src := h.Config.Source
				if src == "" {
					src = "built-in defaults (no configuration file)"
				}
				fmt.Fprintf(w, "config:    %s\n", src)
				fmt.Fprintf(w, "skills:    %d loaded, %d warnings, from:\n", len(skills), len(skillWarnings))
				for _, r := range h.Catalog.Roots() {
					state := ""
					if _, err := os.Stat(r); err != nil {
						state = " (missing)"
					}
					fmt.Fprintf(w, "             %s%s\n", r, state)
				}
				fmt.Fprintf(w, "platform:  %s\n", plat)
				fmt.Fprintf(w, "sandbox:   enabled %v, strategy %s -> %s\n", h.Config.Sandbox.Enabled, h.Config.Sandbox.Strategy, name)
				fmt.Fprintf(w, "plugins:   %s\n", strings.Join(h.Sandbox().Dirs(), ", "))
				for _, r := range reports {
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
				for _, pw := range pluginWarnings {
					fmt.Fprintf(w, "             warning: %s\n", pw)
				}
				if predictions != nil {
					fmt.Fprintf(w, "tools:     %d checked, %d would fail to start\n", len(predictions), len(failing))
					for _, f := range failing {
						fmt.Fprintf(w, "             %s/%s: %s\n               fix: %s\n", f.Skill, f.Tool, f.Problem, f.Fix)
					}
				}
				for _, g := range unknownGrants {
					fmt.Fprintf(w, "grants:    %s\n", g)
				}
				for _, c := range ceilingWarnings {
					fmt.Fprintf(w, "ceiling:   warning: %s\n", c)
				}
				fmt.Fprintf(w, "verdict:   %s\n", verdict)
			}
			if !ok {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
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
