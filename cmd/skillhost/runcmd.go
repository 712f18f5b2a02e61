package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/host/term"
)

func (a *app) runCmd() *cobra.Command {
	var argString string
	var strategy, workspace string
	var streamEvents, review bool
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
			req := host.RunRequest{Skill: argv[0], Tool: argv[1], Args: argv[2:], Strategy: strategy, Workspace: ws, ChunkedOutput: !a.jsonOut}
			if cmd.Flags().Changed("args") {
				if len(req.Args) > 0 {
					return usage(fmt.Errorf("pass arguments either after -- or in --args, not both"))
				}
				req.ArgString = &argString
			}
			// One call, then exit: neither the plugin nor the in-process
			// runner (strategy none) starts anything for a next call.
			a.oneShot = true
			// It waits on the plugin and the script: one processor, but
			// every one while it parses a catalog.
			host.WaitOnOneProcessor()
			h, err := a.open()
			if err != nil {
				return err
			}
			defer h.Close()
			if review {
				req.Review = a.reviewer(h)
			}
			return a.runAndShow(h, req, streamEvents)
		},
	}
	cmd.Flags().StringVar(&argString, "args", "", "arguments as one string, split like a POSIX shell")
	cmd.Flags().BoolVar(&review, "review", false, "show the run's changes (a diff of each text file) and ask before applying them")
	cmd.Flags().BoolVar(&streamEvents, "events", false, "stream the run's events as JSON lines while it runs (stream.ended is the last line)")
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

// interruptible returns a context that SIGINT or SIGTERM cancels, and a
// function that reports which signal did (0 if none). A second signal,
// while the run is being stopped (a remote run waits for its worker to
// confirm), calls again, which should cut that short, so the CLI still
// cleans up (its plugins, their socket directories) before it exits; a
// third has the signal's default effect.
func interruptible(again func()) (context.Context, func() syscall.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var got atomic.Int32
	go func() {
		if s, ok := (<-sigs).(syscall.Signal); ok {
			got.Store(int32(s))
		}
		cancel()
		<-sigs
		signal.Stop(sigs)
		again()
	}()
	return ctx, func() syscall.Signal { return syscall.Signal(got.Load()) }
}

// stopped says what became of an interrupted run: a remote plugin's
// answer on stopping it (an error with a StopConfirmed method, such as
// pluginclient.StopError), else that it was stopped as local runs are.
func stopped(err error) string {
	var stop interface{ StopConfirmed() bool }
	if errors.As(err, &stop) {
		if e, ok := stop.(error); ok {
			return e.Error()
		}
	}
	return "the run and its processes were stopped"
}

// interruptedReport is the report of an interrupted run: its result if it
// came back, else what the run's start said and the output so far.
func interruptedReport(req host.RunRequest, res *host.RunReport, started *host.RunStarted, output *outputSoFar, took time.Duration) *host.RunReport {
	if res != nil {
		res.Interrupted = true
		return res
	}
	rep := &host.RunReport{Skill: req.Skill, Tool: req.Tool, Output: output.String(), ExitCode: -1, DurationMS: took.Milliseconds(),
		Strategy: req.Strategy, Interrupted: true}
	if started != nil {
		rep.Skill, rep.Tool, rep.Strategy, rep.Grant = started.Skill, started.Tool, started.Strategy, started.Grant
	}
	return rep
}

// runAndShow runs req and shows its result the way the flags ask: events
// as JSON lines, the report as JSON, the output as it comes on a terminal,
// or the result's text to a pipe; an interrupted run keeps its output so
// far and exits 128 plus the signal.
func (a *app) runAndShow(h *host.Host, req host.RunRequest, streamEvents bool) error {
	ctx, interrupted := interruptible(h.Close)
	// On a terminal, plain run shows the output as it comes; to a
	// pipe it keeps the output and prints it once, as an agent
	// reads it. Either way the output so far survives Ctrl-C.
	live := !streamEvents && !a.jsonOut && term.IsTerminal(a.stdout)
	var screen *term.Writer
	var partial outputSoFar
	var publish events.PublishFunc
	// With --json, an interrupted run's report is made of what the
	// events said: the run's start and its output so far.
	var started *host.RunStarted
	begun := time.Now()
	switch {
	case streamEvents:
		publish = events.JSONLines(a.stdout)
	default:
		if live {
			screen = term.NewWriter(a.stdout)
		}
		publish = func(e events.Event) error {
			switch d := e.Data.(type) {
			case host.RunStarted:
				started = &d
			case host.OutputDelta:
				if live {
					_, err := io.WriteString(screen, d.Delta)
					return err
				}
				partial.add(d.Delta)
			}
			return nil
		}
	}
	res, err := h.Run(ctx, req, publish)
	if sig := interrupted(); sig != 0 {
		if !live && !streamEvents && !a.jsonOut {
			partial.writeTo(a.stdout)
		}
		if screen != nil {
			screen.Flush()
		}
		if a.jsonOut {
			if err := a.printJSON(interruptedReport(req, res, started, &partial, time.Since(begun))); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.stderr, "\nskillhost: interrupted (%s); %s\n", sig, stopped(err))
		if kept := (*host.KeptError)(nil); errors.As(err, &kept) {
			fmt.Fprintf(a.stderr, "skillhost: %s\n", kept.Kept())
		} else if res != nil {
			for _, n := range res.ChangeNotes() {
				fmt.Fprintln(a.stderr, skill.Printable(n)) // paths the run chose
			}
		}
		return &exitError{code: 128 + int(sig)}
	}
	if err != nil {
		// The output so far (a worker lost mid-run, a plugin that
		// crashed) shows with the error.
		if screen != nil {
			screen.Flush()
		} else if !streamEvents && !a.jsonOut && !partial.empty() {
			partial.writeTo(a.stdout)
			if !partial.endsInNewline() {
				fmt.Fprintln(a.stdout)
			}
		}
		return failure(err)
	}
	return a.showResult(ctx, h, req, res, streamEvents, screen)
}

// showResult shows a finished run the way the flags ask (the output, when
// not streamed already, then the verdict and what the run's changes and
// violations call for) and returns its exit status.
func (a *app) showResult(ctx context.Context, h *host.Host, req host.RunRequest, res *host.RunReport, streamEvents bool, screen *term.Writer) error {
	live := screen != nil
	switch {
	case streamEvents:
		// The events already carried the output and the result.
	case a.jsonOut:
		if err := a.printJSON(res); err != nil {
			return err
		}
	case live:
		screen.Flush()
		if v := res.Verdict(); v != "" {
			fmt.Fprintf(a.stderr, "\n%s\n", v)
		}
		for _, n := range res.ChangeNotes() {
			fmt.Fprintln(a.stderr, skill.Printable(n)) // paths the run chose
		}
	default:
		if err := res.WriteText(a.stdout); err != nil {
			return failed(fmt.Errorf("write output: %w", err))
		}
	}
	if !streamEvents && !a.jsonOut {
		for _, v := range res.Violations {
			if v.Kind == "network" && v.Reason != "" && !live || v.Kind == "protected" || v.Kind == "discarded" || v.Kind == host.Unseen && !live {
				continue // the output's last lines already say it
			}
			if v.Kind == host.Unseen {
				h.Warn("%s", v.Detail) // nothing was denied: the path was not there
				continue
			}
			target := ""
			if v.Target != "" {
				target = " " + v.Target
			}
			h.Warn("sandbox denied %s%s: %s", v.Kind, target, v.Detail)
		}
	}
	if advice := h.ImportAdvice(ctx, req, res); advice != "" {
		h.Warn("%s", advice)
	}
	for _, ne := range res.NotEnforced {
		h.Warn("%s did not enforce: %s", res.Strategy, ne)
	}
	if !res.OK() {
		return &exitError{code: exitFailed}
	}
	return nil
}
