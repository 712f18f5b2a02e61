package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
)

// Exit statuses.
const (
	exitOK     = host.ExitOK
	exitFailed = host.ExitFailed // the thing asked about failed
	exitUsage  = host.ExitUsage  // usage or configuration error
)

// exitError carries an exit status; a nil err means the message was
// already printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// failed reports that the thing asked about failed (exit 1).
func failed(err error) error { return &exitError{code: exitFailed, err: err} }

// usage reports a usage error (exit 2).
func usage(err error) error { return &exitError{code: exitUsage, err: err} }

// app holds what every command shares.
type app struct {
	stdout, stderr io.Writer
	configPath     string
	skillRoots     []string
	logLevel       string
	jsonOut        bool
	quiet, verbose bool
	oneShot        bool // the command makes one plugin call (run)
	// allowMissingRoots lets a command open a catalog whose configured
	// roots do not exist (doctor reports them instead).
	allowMissingRoots bool
}

func (a *app) open() (*host.Host, error) {
	warnings, level := a.stderr, a.logLevel
	if a.quiet {
		warnings, level = io.Discard, "off"
	}
	h, err := host.Open(host.Options{ConfigPath: a.configPath, SkillRoots: a.skillRoots, Warnings: warnings, LogLevel: level, Verbose: a.verbose, OneShot: a.oneShot})
	if err != nil {
		return nil, usage(err)
	}
	if err := h.CheckRoots(); err != nil && !a.allowMissingRoots {
		return nil, usage(err)
	}
	return h, nil
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func run(args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "skillhost",
		Short:         "Discover, validate, match and run Agent Skills under a sandbox",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       host.Version,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage(err) })
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "configuration file (default $SKILLHOST_CONFIG, then $XDG_CONFIG_HOME/skillhost/config.yaml)")
	pf.StringArrayVar(&a.skillRoots, "skills", nil, "skill root directory (repeatable; replaces skills.roots)")
	pf.StringVar(&a.logLevel, "log-level", "warn", "log level: trace, debug, info, warn, error or off")
	pf.BoolVar(&a.jsonOut, "json", false, "machine-readable JSON output (errors too: {\"error\":{\"code\",\"message\",\"hint\"}} on stdout)")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "print no warnings (errors still go to stderr)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "print every warning in detail instead of a summary line")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if a.quiet && a.verbose {
			return usage(fmt.Errorf("--quiet and --verbose contradict each other"))
		}
		switch a.logLevel {
		case "trace", "debug", "info", "warn", "error", "off":
			return nil
		}
		return usage(fmt.Errorf("--log-level: %q is not trace, debug, info, warn, error or off", a.logLevel))
	}
	for _, c := range commands(a) {
		root.AddCommand(c)
	}
	err := root.Execute()
	if err != nil && !a.jsonOut && slices.Contains(args, "--json") {
		a.jsonOut = true // a flag error stopped parsing before --json was read
	}
	return a.exitCode(err)
}

// commands lists every subcommand; each file adds its own.
func commands(a *app) []*cobra.Command {
	return []*cobra.Command{a.listCmd(), a.showCmd(), a.grantCmd(), a.validateCmd(), a.runCmd(), a.profileCmd(), a.matchCmd(), a.activateCmd(), a.promptCmd(), a.pluginsCmd(), a.doctorCmd(), a.mcpCmd(), a.changesCmd()}
}

// exitCode reports err on stderr (and, in --json mode, as an error object
// on stdout) and returns the exit status.
func (a *app) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	code := exitUsage // errors cobra returns by itself: unknown command, bad flags
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code // already reported
		}
		err = ee.err
	}
	err = friendlier(err)
	fmt.Fprintln(a.stderr, "skillhost: "+err.Error())
	if a.jsonOut {
		kind, hint := host.ErrorKind(err, code)
		_ = a.printJSON(map[string]any{"error": map[string]any{"code": kind, "message": err.Error(), "hint": hint, "exit_status": code}})
	}
	return code
}

// friendlier rewrites cobra's own messages that slip through.
func friendlier(err error) error {
	msg := err.Error()
	for _, raw := range []string{"accepts ", "requires at least ", "requires at most ", "accepts between "} {
		if strings.HasPrefix(msg, raw) {
			return fmt.Errorf("wrong number of arguments (%s); skillhost help COMMAND shows the usage", msg)
		}
	}
	return err
}

// failure is an error from the host with the exit status it calls for
// (see host.ExitStatus).
func failure(err error) error { return &exitError{code: host.ExitStatus(err), err: err} }

// args wraps a cobra argument validator so its errors are usage errors
// that show the command's usage line instead of cobra's counts.
func args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return usage(fmt.Errorf("%s: got %s; usage: %s", cmd.Name(), plural(len(a), "argument", "arguments"), cmd.UseLine()))
		}
		return nil
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
