package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/skill"
)

type toolJSON struct {
	Name string `json:"name"`
	// Function is the name to offer an LLM API: skill__tool.
	Function    string         `json:"function"`
	Description string         `json:"description"`
	Path        string         `json:"path"`
	Parameters  map[string]any `json:"parameters"`
}

type skillJSON struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Path        string     `json:"path"`
	Tools       []toolJSON `json:"tools"`
}

// toolsJSON describes s's tools, each with its function name among fns
// (host.Functions of the whole catalog), so that the names match those of
// list --tools and the MCP server even where two collide after sanitising.
func toolsJSON(s *skill.Skill, fns []host.Function) []toolJSON {
	name := map[string]string{}
	for _, f := range fns {
		if f.Skill == s.Name {
			name[f.Tool] = f.Name
		}
	}
	out := []toolJSON{}
	for _, t := range s.Tools {
		out = append(out, toolJSON{Name: t.Name, Function: name[t.Name], Description: t.Description, Path: t.Script, Parameters: t.Parameters()})
	}
	return out
}

func (a *app) listCmd() *cobra.Command {
	var tools string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the skills in the catalog, sorted by name",
		Long: "List prints the skills with their tool counts. --tools openai or --tools anthropic prints\n" +
			"every tool instead, as function definitions ready to send to that API (names skill__tool).",
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			h, err := a.open()
			if err != nil {
				return err
			}
			h.CatalogWarnings()
			skills := h.Catalog.All()
			if tools != "" {
				defs, err := host.FunctionDefs(host.Functions(skills), tools)
				if err != nil {
					return usage(err)
				}
				return a.printJSON(defs)
			}
			if a.jsonOut {
				out := []skillJSON{}
				fns := host.Functions(skills)
				for _, s := range skills {
					out = append(out, skillJSON{Name: s.Name, Description: s.Description, Path: s.Dir, Tools: toolsJSON(s, fns)})
				}
				return a.printJSON(out)
			}
			if len(skills) == 0 {
				fmt.Fprintf(a.stderr, "no skills found: looked for directories holding a SKILL.md in %s\n", strings.Join(h.Catalog.Searched(), ", "))
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTOOLS\tDESCRIPTION")
			for _, s := range skills {
				fmt.Fprintf(tw, "%s\t%d\t%s\n", skill.Printable(s.Name), len(s.Tools), oneLine(s.Description, 80))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&tools, "tools", "", "print every tool as a function definition: openai or anthropic (JSON)")
	return cmd
}

// oneLine shortens text to its first line and at most n characters.
// oneLine shortens text to one line of at most n runes, with what a
// terminal would act on (escape sequences) shown escaped.
func oneLine(text string, n int) string {
	text = skill.Printable(strings.Join(strings.Fields(text), " "))
	if r := []rune(text); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return text
}

func (a *app) findSkill(h *host.Host, name string) (*skill.Skill, error) {
	s, err := h.Catalog.Find(name)
	if err != nil {
		h.CatalogWarnings()
		return nil, usage(err)
	}
	// A few warnings are worth reading here; a long list (a bundle full of
	// schemas under scripts.require_exec) is one line, as list prints it.
	if len(s.Warnings) <= 3 || a.verbose {
		for _, w := range s.Warnings {
			h.Warn("skill %q: %s", s.Name, w)
		}
	} else {
		h.Warn("skill %q has %d warnings (%d scripts not tools); skillhost validate %s or --verbose for details", s.Name, len(s.Warnings), s.Skipped, s.Dir)
	}
	return s, nil
}

// skillGrant opens the host, finds a skill and computes its grant,
// printing the warnings of both.
func (a *app) skillGrant(name string) (*host.Host, *skill.Skill, grant.Grant, error) {
	h, err := a.open()
	if err != nil {
		return nil, nil, grant.Grant{}, err
	}
	s, err := a.findSkill(h, name)
	if err != nil {
		return nil, nil, grant.Grant{}, err
	}
	c := h.Grant(s, "")
	for _, w := range c.Warnings {
		h.Warn("%s", w)
	}
	return h, s, c.Grant, nil
}

type declaredJSON struct {
	FSRead  []string `json:"fs_read"`
	FSWrite []string `json:"fs_write"`
	Network bool     `json:"network"`
	Hosts   []string `json:"hosts,omitempty"`
	Timeout float64  `json:"timeout"`
	Trust   string   `json:"trust"`
}

func (a *app) showCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show a skill: instructions, declared capabilities, effective grant and tools",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, argv []string) error {
			h, s, g, err := a.skillGrant(argv[0])
			if err != nil {
				return err
			}
			d := s.Declared
			if a.jsonOut {
				return a.printJSON(map[string]any{
					"name": s.Name, "description": s.Description, "path": s.Dir, "file": s.File,
					"instructions": s.Instructions,
					"declared": declaredJSON{FSRead: nonNil(d.FSRead), FSWrite: nonNil(d.FSWrite), Network: d.Network, Hosts: d.Hosts,
						Timeout: d.Timeout.Seconds(), Trust: d.Trust},
					"grant": g, "tools": toolsJSON(s, host.Functions(h.Catalog.All())), "warnings": nonNil(s.Warnings),
					"not_tools": notToolsJSON(s),
				})
			}
			w := a.stdout
			fmt.Fprintf(w, "Name:         %s\nDescription:  %s\nPath:         %s\n", skill.Printable(s.Name), oneLine(s.Description, 500), skill.Printable(s.Dir))
			fmt.Fprintf(w, "Declared:     %s\n", describeGrant(d.FSRead, d.FSWrite, networkWords(d.Network, d.Hosts), grant.Seconds(d.Timeout), d.Trust))
			fmt.Fprintf(w, "Grant:        %s\n", describeGrant(g.FSRead, g.FSWrite, networkWords(g.Network, egressHosts(g)), grant.Seconds(g.Timeout), g.Trust))
			if len(s.Tools) == 0 {
				fmt.Fprintln(w, "Tools:        none")
			} else {
				fmt.Fprintln(w, "Tools:")
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				for _, t := range s.Tools {
					rel, _ := filepath.Rel(s.Dir, t.Script)
					where := "(" + skill.Printable(rel) + ")"
					desc := oneLine(t.Description, 70)
					if strings.HasSuffix(desc, "("+rel+")") {
						where = "" // a tool without a description is named by its path already
					}
					fmt.Fprintf(tw, "  %s\t%s\t%s\n", skill.Printable(t.Name), desc, where)
				}
				tw.Flush()
			}
			a.printNotTools(w, s)
			fmt.Fprintf(w, "\nInstructions:\n%s\n", skill.Printable(s.Instructions))
			return nil
		},
	}
}

// printNotTools tells of the files under scripts/ that are not tools:
// with --verbose each with its reason, otherwise how many.
func (a *app) printNotTools(w io.Writer, s *skill.Skill) {
	switch n := len(s.NotTools); {
	case n == 0:
	case a.verbose:
		fmt.Fprintln(w, "Not tools:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, nt := range s.NotTools {
			fmt.Fprintf(tw, "  %s\t%s\n", skill.Printable(nt.Rel), skill.Printable(nt.Reason))
		}
		tw.Flush()
	default:
		fmt.Fprintf(w, "Not tools:    %d %s under scripts/ (--verbose says why)\n", n, pickWord(n == 1, "file", "files"))
	}
}

type notToolJSON struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Warned bool   `json:"warned"`
}

// notToolsJSON lists the files under scripts/ that are not tools.
func notToolsJSON(s *skill.Skill) []notToolJSON {
	out := []notToolJSON{}
	for _, nt := range s.NotTools {
		out = append(out, notToolJSON{Path: nt.Rel, Reason: nt.Reason, Warned: nt.Warned})
	}
	return out
}

func pickWord(one bool, a, b string) string {
	if one {
		return a
	}
	return b
}

func describeGrant(read, write []string, network, timeout, trust string) string {
	return fmt.Sprintf("fs_read %s, fs_write %s, network %s, timeout %ss, trust %s", list(read), list(write), network, timeout, trust)
}

// networkWords is a network grant as the text output says it: false, true
// (every host) or the list of hosts.
func networkWords(on bool, hosts []string) string {
	if !on || hosts == nil {
		return strconv.FormatBool(on)
	}
	return list(hosts)
}

func egressHosts(g grant.Grant) []string {
	if g.Egress == nil {
		return nil
	}
	return g.Egress.Allow
}

// list shows paths and hosts a skill declared, through the sanitizer:
// they are the skill's own text.
func list(items []string) string {
	return skill.Printable("[" + strings.Join(items, ", ") + "]")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *app) grantCmd() *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "grant NAME",
		Short: "Print a skill's effective grant and where each part came from (skill, operator, workspace)",
		Long: "Grant prints what a skill may do when it runs: what its SKILL.md declares plus what the\n" +
			"configuration grants it (skills.grants.NAME), clamped to the sandbox ceiling, plus the\n" +
			"working directory when a workspace grant is on. Each path is followed by its origin.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ws, err := workspaceFlag(cmd, workspace)
			if err != nil {
				return err
			}
			h, err := a.open()
			if err != nil {
				return err
			}
			s, err := a.findSkill(h, argv[0])
			if err != nil {
				return err
			}
			c := h.Grant(s, ws)
			g, origins := c.Grant, c.Origins
			for _, w := range c.Warnings {
				h.Warn("%s", w)
			}
			if a.jsonOut {
				out := map[string]any{
					"fs_read": nonNil(g.FSRead), "fs_write": nonNil(g.FSWrite), "network": g.Network,
					"timeout": json.Number(grant.Seconds(g.Timeout)), "trust": g.Trust, "origins": origins,
					"protected": nonNil(g.Protected),
				}
				if e := g.Egress; e != nil {
					out["hosts"] = e.Allow
					out["deny"] = nonNil(e.Deny)
					out["deny_addresses"] = nonNil(e.DenyAddresses)
				}
				return a.printJSON(out)
			}
			network := fmt.Sprintf("%v (%s)", g.Network, origins.Network)
			if e := g.Egress; e != nil {
				var hosts []string
				for _, p := range e.Allow {
					hosts = append(hosts, p+" ("+strings.Join(origins.Hosts[p], ", ")+")")
				}
				network = "only " + strings.Join(hosts, ", ") + ", through the sandbox's proxy"
				if len(e.Deny) > 0 {
					network += "; never " + strings.Join(e.Deny, ", ") + " (ceiling)"
				}
			}
			fmt.Fprintf(a.stdout, "fs_read:  %s\nfs_write: %s\nnetwork:  %s\ntimeout:  %ss (%s)\ntrust:    %s\n",
				withOrigins(g.FSRead, origins.FSRead), withOrigins(g.FSWrite, origins.FSWrite), network,
				grant.Seconds(g.Timeout), origins.Timeout, g.Trust)
			if len(g.FSWrite) > 0 {
				fmt.Fprintln(a.stdout, h.WritesMeaning())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "grant the working directory for this command: none, read or read-write")
	return cmd
}

// workspaceFlag checks a --workspace value; "" means the flag was not given.
func workspaceFlag(cmd *cobra.Command, value string) (string, error) {
	if !cmd.Flags().Changed("workspace") {
		return "", nil
	}
	ws, err := grant.ParseWorkspace(value)
	if err != nil {
		return "", usage(fmt.Errorf("--workspace: %w", err))
	}
	return ws, nil
}

// withOrigins lists paths, each followed by where it came from.
func withOrigins(paths []string, origins map[string][]string) string {
	items := make([]string, len(paths))
	for i, p := range paths {
		items[i] = p
		if o := origins[p]; len(o) > 0 {
			items[i] += " (" + strings.Join(o, ", ") + ")"
		}
	}
	return list(items)
}
