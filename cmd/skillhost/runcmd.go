package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/shared"
)

type runJSON struct {
	Output      string             `json:"output"`
	ExitCode    int                `json:"exit_code"`
	Signal      string             `json:"signal"`
	TimedOut    bool               `json:"timed_out"`
	Truncated   bool               `json:"truncated"`
	DurationMS  int64              `json:"duration_ms"`
	Grant       any                `json:"grant"`
	Strategy    string             `json:"strategy"`
	Violations  []shared.Violation `json:"violations"`
	NotEnforced []string           `json:"not_enforced"`
}

func (a *app) runCmd() *cobra.Command {
	var argString string
	var strategy, workspace string
	cmd := &cobra.Command{
		Use:   "run NAME TOOL [-- ARG...]",
		Short: "Run one of a skill's script tools and print its result",
		Long: "Run prints the tool's result as an agent sees it: the output on success, otherwise an\n" +
			"\"Error (...)\" header before the output. Arguments follow --, or come as one string in\n" +
			"--args, split like a POSIX shell.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, argv []string) error {
			if len(argv) < 2 {
				return a.runUsage(cmd, argv)
			}
			ws, err := workspaceFlag(cmd, workspace)
			if err != nil {
				return err
			}
			req := host.RunRequest{Skill: argv[0], Tool: argv[1], Args: argv[2:], Strategy: strategy, Workspace: ws}
			if cmd.Flags().Changed("args") {
				if len(req.Args) > 0 {
					return usage(fmt.Errorf("pass arguments either after -- or in --args, not both"))
				}
				req.ArgString = &argString
			}
			h, err := a.open()
			if err != nil {
				return err
			}
			defer h.Close()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := h.Run(ctx, req, nil)
			if err != nil {
				return &exitError{code: failureCode(err), err: err}
			}
			if a.jsonOut {
				violations := res.Violations
				if violations == nil {
					violations = []shared.Violation{}
				}
				if err := a.printJSON(runJSON{
					Output: string(res.Output), ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut,
					Truncated: res.Truncated, DurationMS: res.Duration.Milliseconds(), Grant: res.Grant,
					Strategy: res.Strategy, Violations: violations, NotEnforced: nonNil(res.NotEnforced),
				}); err != nil {
					return err
				}
			} else {
				fmt.Fprint(a.stdout, res.Text())
				for _, v := range res.Violations {
					target := ""
					if v.Target != "" {
						target = " " + v.Target
					}
					h.Warn("sandbox denied %s%s: %s", v.Kind, target, v.Detail)
				}
			}
			for _, ne := range res.NotEnforced {
				h.Warn("%s did not enforce: %s", res.Strategy, ne)
			}
			if !res.OK() {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&argString, "args", "", "arguments as one string, split like a POSIX shell")
	cmd.Flags().StringVar(&strategy, "strategy", "", "sandbox plugin to use for this run (overrides sandbox.strategy)")
	cmd.Flags().StringVar(&workspace, "workspace", "", "grant the working directory to this run: none, read or read-write (overrides skills.grants.NAME.workspace)")
	return cmd
}

// runUsage explains a run without a skill or tool, listing the skills or
// the named skill's tools.
func (a *app) runUsage(cmd *cobra.Command, argv []string) error {
	msg := "name a skill and one of its tools: " + cmd.UseLine()
	h, err := a.open()
	if err != nil {
		return usage(errors.New(msg))
	}
	if len(argv) == 0 {
		return usage(fmt.Errorf("%s (skillhost list shows the skills)", msg))
	}
	s, err := h.Catalog.Find(argv[0])
	if err != nil {
		return usage(err)
	}
	names := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		names[i] = t.Name
	}
	if len(names) == 0 {
		return usage(fmt.Errorf("%s; skill %q has no tools", msg, s.Name))
	}
	return usage(fmt.Errorf("%s; skill %q has tools: %s", msg, s.Name, strings.Join(names, ", ")))
}
