package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/changeset"
	"github.com/skillhost/skillhost/host/skill"
)

// changesCmd is `skillhost changes`: the changes of staged runs that were
// not applied (refused, interrupted, declined, conflicting), to list,
// show, apply or drop.
func (a *app) changesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "changes",
		Short: "List, show, apply or drop the changes of runs that were not applied",
		Long: `A confined run writes a copy-on-write view of its write grants; skillhost applies what it
changed afterwards, under one protection policy (docs/sandbox.md). What it did not apply (a
protected path, an interrupted run, a declined review, a conflict) is kept here, by run id.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.changesList() },
	}
	cmd.AddCommand(&cobra.Command{
		Use: "list", Short: "List the runs whose changes were not all applied",
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error { return a.changesList() },
	})
	cmd.AddCommand(&cobra.Command{
		Use: "show RUN", Short: "Show a run's kept changes, with a diff of each text file",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.withHost(func(h *host.Host) error { return a.changesShow(h, args[0]) })
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "apply RUN [PATH...]",
		Short: "Apply a run's kept changes (naming a PATH applies it even where a protected name would stop it)",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.withHost(func(h *host.Host) error { return a.changesApply(h, args[0], args[1:]) })
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use: "drop RUN", Short: "Forget a run's kept changes without applying them",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.withHost(func(h *host.Host) error {
				if err := h.DropKept(args[0]); err != nil {
					return failure(err)
				}
				fmt.Fprintf(a.stdout, "dropped the kept changes of run %s\n", args[0])
				return nil
			})
		},
	})
	return cmd
}

// withHost opens the host for fn and closes it after.
func (a *app) withHost(fn func(*host.Host) error) error {
	h, err := a.open()
	if err != nil {
		return err
	}
	defer h.Close()
	return fn(h)
}

// changesShow prints a run's kept changes, each with a diff of text files.
func (a *app) changesShow(h *host.Host, run string) error {
	m, err := h.KeptRun(run)
	if err != nil {
		return failure(err)
	}
	if a.jsonOut {
		return a.printJSON(m)
	}
	fmt.Fprintf(a.stdout, "run %s (%s/%s, %s)\n", m.Run, skill.Printable(m.Skill), skill.Printable(m.Tool), m.Started.Format(time.RFC3339))
	if m.Interrupted != "" {
		fmt.Fprintf(a.stdout, "not applied: %s\n", m.Interrupted)
	}
	for _, c := range m.Changes {
		writeChange(a.stdout, h, m.Run, c)
	}
	fmt.Fprintf(a.stdout, "apply: skillhost changes apply %s [PATH...]   drop: skillhost changes drop %s\n", m.Run, m.Run)
	return nil
}

// changesApply applies a run's kept changes (those at paths, if named)
// and says what became of each.
func (a *app) changesApply(h *host.Host, run string, paths []string) error {
	rep, err := h.ApplyKept(run, paths)
	if err != nil {
		return failure(err)
	}
	if a.jsonOut {
		return a.printJSON(rep)
	}
	for _, c := range rep.Applied {
		fmt.Fprintf(a.stdout, "applied  %s %s\n", c.Kind, skill.Printable(c.Path))
	}
	for _, c := range rep.Conflicts {
		fmt.Fprintf(a.stdout, "conflict %s: %s\n", skill.Printable(c.Path), c.Reason)
	}
	for _, c := range rep.Refused {
		fmt.Fprintf(a.stdout, "refused  %s %s: %s\n", c.Kind, skill.Printable(c.Path), c.Reason)
	}
	if len(rep.Refused)+len(rep.Conflicts) > 0 {
		fmt.Fprintf(a.stdout, "still kept: skillhost changes apply %s PATH applies a refused change you have checked\n", rep.Run)
		return &exitError{code: exitFailed}
	}
	return nil
}

func (a *app) changesList() error { return a.withHost(a.changesListOf) }

func (a *app) changesListOf(h *host.Host) error {
	runs, err := h.KeptChanges()
	if err != nil {
		return failure(err)
	}
	if a.jsonOut {
		if runs == nil {
			return a.printJSON(map[string]any{"runs": []any{}})
		}
		return a.printJSON(map[string]any{"runs": runs})
	}
	if len(runs) == 0 {
		fmt.Fprintln(a.stdout, "no kept changes")
		return nil
	}
	for _, m := range runs {
		why := m.Interrupted
		if why == "" {
			why = outcomes(m.Changes)
		}
		fmt.Fprintf(a.stdout, "%s  %s  %s/%s  %d changes  (%s)\n", m.Run, m.Started.Format("2006-01-02 15:04"), skill.Printable(m.Skill), skill.Printable(m.Tool), len(m.Changes), skill.Printable(why))
	}
	fmt.Fprintln(a.stdout, "skillhost changes show RUN shows one")
	return nil
}

// writeChange prints one change of a run, and a diff when it is a text
// file.
func writeChange(w io.Writer, h *host.Host, run string, c changeset.Change) {
	line := fmt.Sprintf("%-8s %-4s %s", c.Kind, c.Type, skill.Printable(c.Path))
	if c.Type == "file" && c.Kind != "deleted" {
		line += fmt.Sprintf(" (%d bytes)", c.Size)
	}
	if c.Type == "symlink" {
		line += " -> " + skill.Printable(c.Target)
	}
	if c.Reason != "" {
		line += "\n         " + skill.Printable(c.Reason)
	}
	fmt.Fprintln(w, line)
	for _, l := range h.ChangeDiff(run, c) {
		fmt.Fprintln(w, "         "+l)
	}
}

// outcomes counts kept changes by what became of them: "1 refused, 2
// discarded".
func outcomes(cs []changeset.Change) string {
	counts := map[string]int{}
	var order []string
	for _, c := range cs {
		if counts[c.Outcome] == 0 {
			order = append(order, c.Outcome)
		}
		counts[c.Outcome]++
	}
	var parts []string
	for _, o := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
	}
	return strings.Join(parts, ", ")
}
