package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/mcpserver"
)

func (a *app) mcpCmd() *cobra.Command {
	var (
		httpAddr       string
		workspace      string
		review         bool
		allowRemote    bool
		disclosureOnly bool
		tools          string
		strategy       string
		poll           time.Duration
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the skills over the Model Context Protocol (stdio, or streamable HTTP with --http)",
		Long: "mcp offers every script tool of every skill as an MCP tool named <skill>__<tool>, run under the\n" +
			"same sandbox as `skillhost run`, plus skills_search and skill_activate, and each skill's files\n" +
			"(its text files, and all of references/ and assets/) as resources. Changes on disk are announced to clients.\n\n" +
			"Over HTTP it listens on loopback only, unless --allow-remote is given, and always requires a bearer\n" +
			"token: the one in $" + mcpserver.TokenEnv + ", or one generated and printed at start. Browser pages of\n" +
			"other origins are refused, idle sessions expire after 10 minutes and at most 64 are open at once.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			token := os.Getenv(mcpserver.TokenEnv)
			ws, err := grant.ParseWorkspace(workspace)
			if err != nil {
				return usage(fmt.Errorf("--workspace: %w", err))
			}
			if httpAddr != "" {
				if err := mcpserver.CheckListenAddr(httpAddr, allowRemote, token); err != nil {
					return usage(err)
				}
			} else if allowRemote {
				return usage(fmt.Errorf("--allow-remote applies only with --http"))
			}
			if poll < 0 {
				return usage(fmt.Errorf("--poll must not be negative"))
			}
			if httpAddr == "" {
				// One client, whose calls wait; over HTTP,
				// up to 64 sessions share the server.
				host.WaitOnOneProcessor()
			}
			h, err := a.open()
			if err != nil {
				return err
			}
			defer h.Close()
			h.CatalogWarnings()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slogLevel(a.logLevel)}))
			opts := mcpserver.Options{Strategy: strategy, DisclosureOnly: disclosureOnly, Logger: logger, Workspace: ws, Review: review}
			switch tools {
			case "activated":
				opts.ToolsOnActivate = true
			case "none":
				opts.DisclosureOnly = true
			case "all":
			default:
				return usage(fmt.Errorf("--tools %q: want activated, all or none", tools))
			}
			srv := h.MCPServer(opts)
			if poll > 0 {
				go srv.Watch(ctx, poll)
			}
			if httpAddr != "" {
				// A token always: on loopback too, any local user or any
				// script with network could otherwise call every tool.
				generated := token == ""
				if generated {
					if token, err = mcpserver.NewToken(); err != nil {
						return failed(err)
					}
				}
				err = srv.ServeHTTP(ctx, httpAddr, allowRemote, token, func(addr net.Addr) {
					if generated {
						fmt.Fprintf(a.stderr, "skillhost: bearer token for this server: %s (set $%s to choose one)\n", token, mcpserver.TokenEnv)
					}
					fmt.Fprintf(a.stderr, "skillhost: serving MCP on http://%s\n", addr)
				})
			} else {
				err = srv.Run(ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{a.stdout}})
			}
			if err != nil && ctx.Err() == nil {
				return failed(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&review, "review", false, "ask the client's user (MCP elicitation) before a run's changes are applied; a client that cannot ask gets them kept")
	f.StringVar(&workspace, "workspace", "read", "grant each call the client's roots (or, without roots, the working directory): none, read or read-write")
	f.StringVar(&httpAddr, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio")
	f.BoolVar(&allowRemote, "allow-remote", false, "allow a non-loopback --http address (requires $"+mcpserver.TokenEnv+")")
	f.BoolVar(&disclosureOnly, "disclosure-only", false, "offer only skills_search and skill_activate, not a tool per script (as --tools none)")
	f.StringVar(&tools, "tools", "activated", "which script tools to offer: activated (a skill's, once skill_activate names it), all, or none")
	f.StringVar(&strategy, "strategy", "", "sandbox plugin for every call (overrides sandbox.strategy)")
	f.DurationVar(&poll, "poll", 2*time.Second, "how often to look for skills changed on disk (0: never)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func slogLevel(level string) slog.Level {
	switch level {
	case "trace", "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	case "error":
		return slog.LevelError
	case "off":
		return slog.LevelError + 100
	}
	return slog.LevelWarn
}
