package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/shared"
)

func (a *app) pluginsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List the sandbox plugins found, what each enforces and whether it works here",
		Args:  args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			h, err := a.open()
			if err != nil {
				return err
			}
			defer h.Close()
			reports, warnings := h.Plugins(context.Background())
			for _, w := range warnings {
				h.Warn("%s", w)
			}
			auto, _ := h.Strategy()
			if a.jsonOut {
				if reports == nil {
					reports = []host.PluginReport{}
				}
				return a.printJSON(map[string]any{"plugins": reports, "dirs": h.Sandbox().Dirs(), "strategy": auto})
			}
			if len(reports) == 0 {
				fmt.Fprintf(a.stdout, "no sandbox plugins in %s\n", strings.Join(h.Sandbox().Dirs(), ", "))
			}
			for _, r := range reports {
				printPlugin(a.stdout, r)
			}
			fmt.Fprintf(a.stdout, "strategy here: %s (sandbox.strategy %s on %s)\n", auto, h.Config.Sandbox.Strategy, runtime.GOOS)
			return nil
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "pin [NAME...]",
		Short: "Record the SHA-256 of the named plugins, or of every discovered plugin, in the configuration (plugins.sha256)",
		Long: "Record the current SHA-256 of the named sandbox plugins (all discovered plugins when none is named) under\n" +
			"plugins.sha256 in the configuration file, keeping its comments and the other plugins' pins. Each pin that\n" +
			"changes is shown as old -> new; a plugin that was not pinned shows its sum alone.",
		Args: args(cobra.ArbitraryArgs),
		RunE: func(_ *cobra.Command, names []string) error {
			h, err := a.open()
			if err != nil {
				return err
			}
			defer h.Close()
			pins, err := h.Pin(names...)
			if ue := (*host.UsageError)(nil); errors.As(err, &ue) {
				return usage(err) // a name that is not a plugin
			}
			if err != nil {
				return failed(err)
			}
			if a.jsonOut {
				return a.printJSON(pins)
			}
			for _, n := range slices.Sorted(maps.Keys(pins.Sums)) {
				fmt.Fprintln(a.stdout, pinLine(n, pins.Previous[n], pins.Sums[n]))
			}
			fmt.Fprintf(a.stdout, "wrote plugins.sha256 to %s\n", pins.Config)
			return nil
		},
	})
	return cmd
}

// pinLine says what pinning name did: its sum when it had no pin, old ->
// new when the pin changed, and that it is unchanged otherwise.
func pinLine(name, old, sum string) string {
	switch old {
	case "":
		return fmt.Sprintf("pinned %s %s", name, sum)
	case sum:
		return fmt.Sprintf("pinned %s %s (unchanged)", name, sum)
	}
	return fmt.Sprintf("pinned %s %s -> %s", name, old, sum)
}

func printPlugin(w io.Writer, r host.PluginReport) {
	fmt.Fprintf(w, "%s  %s\n", r.Name, r.Path)
	if r.Info != nil {
		fmt.Fprintf(w, "  version:  %s, contract %s, %s\n", r.Info.Version, ints(r.Info.ContractVersions), r.Info.Platform)
		fmt.Fprintf(w, "  enforces: %s\n", enforced(r.Info.Enforces))
		fmt.Fprintf(w, "  isolates: %s\n", isolated(r.Info.Isolation))
	}
	if r.Probe != nil {
		fmt.Fprintf(w, "  probe:    %s: %s\n", r.Probe.Status, r.Probe.Reason)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  error:    %s\n", r.Error)
	}
	pin := "not pinned"
	switch r.Pinned {
	case "match":
		pin = "matches plugins.sha256"
	case "mismatch":
		pin = "DOES NOT MATCH plugins.sha256"
	}
	fmt.Fprintf(w, "  sha256:   %s (%s)\n", r.SHA256, pin)
	if r.Supervisor != "" {
		note := map[string]string{"": "not pinned", "match": "matches its pin", "mismatch": "DOES NOT MATCH its pin: the plugin will not start",
			"unpinned": "not pinned, so runs re-execute the pinned plugin instead; `skillhost plugins pin` pins it"}[r.SupervisorPinned]
		fmt.Fprintf(w, "  supervisor: %s (%s)\n", r.Supervisor, note)
	}
	if r.OneShot != "" {
		note := "what `skillhost run` starts, but for a run by name; not pinned"
		if !r.OneShotUsed {
			note = "not started: a pin covers the plugin (or its supervisor), not this binary, so `skillhost run` starts the plugin"
		}
		fmt.Fprintf(w, "  one-shot:   %s (%s)\n", r.OneShot, note)
	}
}

// isolated names the namespaces a backend's runs get of their own, as its
// Info declares them ("none": every one shared with the host).
func isolated(i shared.Isolation) string {
	var parts []string
	for _, ns := range []struct {
		decl shared.Namespace
		name string
	}{{i.Network, "network"}, {i.IPC, "ipc"}, {i.PID, "pid"}, {i.Mount, "mount"}, {i.User, "user"}} {
		switch ns.decl {
		case shared.Shared:
		case shared.PrivateUnlessNetwork:
			parts = append(parts, ns.name+" (unless the whole network is granted)")
		default:
			parts = append(parts, ns.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func enforced(e shared.Enforcement) string {
	var parts []string
	for _, f := range []struct {
		on   bool
		name string
	}{{e.FSRead, "fs-read"}, {e.FSWrite, "fs-write"}, {e.Network, "network"}, {e.Timeout, "timeout"},
		{e.ResourceLimits, "resource-limits"}, {e.ProcessIsolation, "process-isolation"}, {e.Egress, "egress"},
		{e.StagedWrites, "staged-writes"}} {
		if f.on {
			parts = append(parts, f.name)
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}
