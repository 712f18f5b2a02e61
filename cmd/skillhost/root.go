package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/sandbox"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1 // the thing asked about failed
	exitUsage  = 2 // usage or configuration error
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
}

func (a *app) open() (*host.Host, error) {
	h, err := host.Open(host.Options{ConfigPath: a.configPath, SkillRoots: a.skillRoots, Warnings: a.stderr, LogLevel: a.logLevel})
	if err != nil {
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
	pf.BoolVar(&a.jsonOut, "json", false, "machine-readable JSON output")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
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
	return exitCode(err, stderr)
}

// commands lists every subcommand; each file adds its own.
func commands(a *app) []*cobra.Command {
	return []*cobra.Command{a.listCmd(), a.showCmd(), a.grantCmd(), a.validateCmd(), a.runCmd(), a.profileCmd(), a.matchCmd(), a.activateCmd(), a.promptCmd(), a.pluginsCmd(), a.doctorCmd()}
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "skillhost: "+ee.err.Error())
		}
		return ee.code
	}
	// Errors cobra returns by itself (unknown command, bad arguments) and
	// configuration errors are usage errors.
	fmt.Fprintln(stderr, "skillhost: "+err.Error())
	return exitUsage
}

// failureCode is exitUsage for a usage or configuration problem, including
// a strategy whose plugin is missing, cannot work here or is not the pinned
// binary, and exitFailed for anything else (a plugin crashed, a script
// could not start).
func failureCode(err error) int {
	var (
		ue *host.UsageError
		ce *config.Error
		nf *sandbox.NotFoundError
		us *sandbox.UnsupportedError
		cs *sandbox.ChecksumError
		ie *host.InterpreterError
	)
	if errors.As(err, &ue) || errors.As(err, &ce) || catalog.IsNotFound(err) ||
		errors.As(err, &nf) || errors.As(err, &us) || errors.As(err, &cs) || errors.As(err, &ie) {
		return exitUsage
	}
	// A plugin that could not start the script because its interpreter is
	// outside the sandbox says so (its error crosses gRPC as text): a
	// configuration problem with a named fix.
	if strings.Contains(err.Error(), "to sandbox.interpreters") {
		return exitUsage
	}
	return exitFailed
}

// args wraps a cobra argument validator so its errors are usage errors.
func args(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := v(cmd, a); err != nil {
			return usage(err)
		}
		return nil
	}
}
