package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/skill"
)

func (a *app) validateCmd() *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "validate [--strict] PATH...",
		Short: "Validate skills: a skill directory, a SKILL.md, or a root of skill directories",
		Long: "Validate checks what loading accepts (warnings go to stderr). With --strict it checks the open\n" +
			"Agent Skills specification: name rules, lengths in characters, and only the specification's keys.\n" +
			"With --verbose it lists every file under scripts/ that is not a tool, and why.",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, paths []string) error {
			results, err := host.Validate(host.ValidateOptions{ConfigPath: a.configPath, Strict: strict}, paths...)
			if err != nil {
				return usage(err)
			}
			allValid := true
			for _, r := range results {
				allValid = allValid && r.Valid
				for _, w := range r.Warnings {
					fmt.Fprintf(a.stderr, "warning: %s: %s\n", skill.Printable(r.Path), skill.Printable(w))
				}
			}
			if a.jsonOut {
				if err := a.printJSON(results); err != nil {
					return err
				}
			} else {
				for _, r := range results {
					if r.Valid {
						fmt.Fprintf(a.stdout, "Valid skill: %s\n", skill.Printable(r.Path))
					} else {
						fmt.Fprintf(a.stdout, "Validation failed for %s:\n", skill.Printable(r.Path))
						for _, e := range r.Errors {
							fmt.Fprintf(a.stdout, "  - %s\n", skill.Printable(e))
						}
					}
					if a.verbose {
						for _, n := range r.NotTools {
							fmt.Fprintf(a.stdout, "  not a tool: %s: %s\n", skill.Printable(n.Rel), skill.Printable(n.Reason))
						}
					}
				}
			}
			if !allValid {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "check the open Agent Skills specification instead of what loading accepts")
	return cmd
}
