package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
)

func (a *app) profileCmd() *cobra.Command {
	var strategy string
	cmd := &cobra.Command{
		Use:   "profile NAME [TOOL]",
		Short: "Print the sandbox profile a skill's tool would run under, without running it",
		Long: "Profile prints how a run of the skill's tool would be confined, without running it, for review:\n" +
			"by default under the strategy a run would use here (the Landlock policy on Linux). With\n" +
			"--strategy seatbelt it prints the Seatbelt (SBPL) profile and the sandbox-exec command line with\n" +
			"its -D parameters, on any OS.",
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(_ *cobra.Command, argv []string) error {
			req := host.RunRequest{Skill: argv[0], Strategy: strategy}
			if len(argv) == 2 {
				req.Tool = argv[1]
			}
			h, err := a.open()
			if err != nil {
				return err
			}
			defer h.Close()
			e, name, err := h.Explain(context.Background(), req)
			if err != nil {
				return failure(err)
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"strategy": name, "format": e.Format, "profile": e.Text, "argv": e.Argv})
			}
			fmt.Fprint(a.stdout, e.Text)
			comment := ";;"
			if e.Format != "sbpl" {
				comment = "#"
			}
			fmt.Fprintf(a.stdout, "\n%s command line (%s):\n", comment, name)
			for _, line := range commandLines(e.Argv) {
				fmt.Fprintf(a.stdout, "%s   %s\n", comment, line)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&strategy, "strategy", "", "plugin whose confinement to show (default: the one a run would use here; seatbelt shows the macOS profile on any OS)")
	return cmd
}

// commandLines shows argv one option per line, keeping each -D with its
// value.
func commandLines(argv []string) []string {
	var lines []string
	for i := 0; i < len(argv); i++ {
		if argv[i] == "-D" || argv[i] == "-f" {
			if i+1 < len(argv) {
				lines = append(lines, argv[i]+" "+argv[i+1])
				i++
				continue
			}
		}
		lines = append(lines, argv[i])
	}
	return []string{strings.Join(lines, " \\\n;;     ")}
}
