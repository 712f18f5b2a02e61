// Package mcpserver serves a skillhost catalog over the Model Context
// Protocol with the official Go SDK: every script tool of every skill as an
// MCP tool that runs under the same confinement as `skillhost run`,
// skills_search and skill_activate for progressive disclosure, and each
// skill's SKILL.md, references/ and assets/ as read-only resources. Skills
// added, changed or removed on disk are picked up and announced with
// list-changed notifications.
package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/host/skill"
)

// Names of the progressive-disclosure tools.
const (
	SearchTool   = "skills_search"
	ActivateTool = "skill_activate"
)

// Host is what a Server needs of skillhost's host: the catalog, tool runs
// and matching. Package host provides it (Host.MCPServer builds a Server
// over an opened host); this package cannot import host, which offers the
// server to its callers.
type Host interface {
	Catalog() *catalog.Catalog
	// RunTool runs a script tool exactly as `skillhost run` does, passing
	// each piece of its output, as it comes, to output when that is not
	// nil (an error it returns is reported, never stops the run);
	// cancelling ctx stops the script and its process tree. An error means
	// the tool could not run.
	RunTool(ctx context.Context, call ToolCall, output func(delta string) error) (*ToolResult, error)
	// ApplyKept applies a run's kept changes (after a review said yes)
	// and says what became of them in a line for the agent.
	ApplyKept(run string) (string, error)
	// Search ranks the skills for a query, best first, at most limit of
	// them (0: a few), every one with some evidence whether or not it
	// passes threshold, the score automatic activation needs.
	Search(ctx context.Context, query string, limit int) (hits []match.Match, threshold float64, err error)
}

// ToolCall names a script tool and its arguments.
type ToolCall struct {
	Skill, Tool string
	// Argv are passed as they are; ArgString, if set instead, is split
	// like a POSIX shell.
	Argv      []string
	ArgString *string
	// Strategy overrides sandbox.strategy ("" keeps it).
	Strategy string
	// Workspace is the workspace grant of the call ("" keeps the
	// configured one), and Roots the client's roots it applies to (none:
	// the server's working directory).
	Workspace string
	Roots     []string
	// Review, when set, is asked before a staged run's changes are
	// applied, with a summary of them; false keeps them unapplied.
	Review func(ctx context.Context, run, summary string) bool
}

// ToolResult is a finished script tool call.
type ToolResult struct {
	// Text is the result as an agent sees it: the output, under an error
	// header when the script failed.
	Text string
	// Failed says the script exited non-zero, was killed or timed out.
	Failed bool
	// Structured is the result's machine-readable form (any value that
	// marshals to a JSON object).
	Structured any
}

// Options configure New.
type Options struct {
	// Strategy overrides sandbox.strategy for every call ("" keeps it).
	Strategy string
	// DisclosureOnly offers only skills_search and skill_activate, not a
	// tool per script.
	DisclosureOnly bool
	// ToolsOnActivate offers a skill's script tools once skill_activate
	// has named it (clients hear tools/list_changed), as the Agent Skills
	// model discloses a skill: a catalog of many skills does not cost
	// every request the whole tool list.
	ToolsOnActivate bool
	// Logger receives the SDK's and the watcher's logs; nil discards them.
	Logger *slog.Logger
	// Version is the server version announced to clients.
	Version string
	// Workspace is the workspace grant of every call: read or read-write
	// ("" keeps each skill's configured one). It applies to the client's
	// roots (roots/list), or to the server's working directory when the
	// client has none.
	Workspace string
	// WorkspaceRoots are the directories a client's root must be or lie
	// in to become the workspace, as the operator writes them (~, $VAR
	// and ${VAR} expanded, symlinks resolved at each call); nil means the
	// home directory. Whatever they say, a root is never /, /etc, /usr,
	// /var, the home directory, one of its hidden directories or a
	// protected name (see RootPolicy.Check): a call with such a root is
	// refused.
	WorkspaceRoots []string
	// Review asks the user, through the client's elicitation, before a
	// run's changes are applied; a client that cannot elicit gets them
	// kept, not applied (skillhost changes apply).
	Review bool
	// Home is the home directory for ~ and for the rules on roots; ""
	// means os.UserHomeDir.
	Home string
}

// Server is an MCP server over a host's catalog. It is safe for concurrent
// use; calls run concurrently, each in its own sandboxed process.
type Server struct {
	h      Host
	opts   Options
	mcp    *mcp.Server
	logger *slog.Logger

	mu    sync.Mutex // guards the fields below and serialises Sync
	tools map[string]toolSpec
	// names are every script tool's MCP name, by skill and tool, offered
	// or not yet (a search lists what activation will offer).
	names     map[string]map[string]string
	resources map[string]resourceFile

	activated map[string]bool // skills whose tools are offered, with ToolsOnActivate

	rootsMu sync.Mutex
	roots   map[*mcp.ServerSession][]string // each client's roots, until they change

	reviewsMu sync.Mutex
	reviews   map[reviewKey]*pendingReview // runs awaiting a client's answer (mrtrVersion)

	callMetrics callMetrics // served at /metrics over HTTP (metrics.go)
}

// reviewKey names a run awaiting review in the session that made it: a
// client cannot answer for another's.
type reviewKey struct {
	ss  *mcp.ServerSession
	run string
}

// pendingReview is a run whose changes wait for the client's answer, with
// the result to give once it comes.
type pendingReview struct {
	summary string
	res     *ToolResult
}

// toolSpec is what an offered script tool stands for; a change in any field
// replaces the tool.
type toolSpec struct {
	skill, tool, description string
	// schema is the JSON of the tool's skill.Tool.Parameters, the schema
	// every agent-facing form of a tool shares.
	schema string
}

// New builds the server and offers the catalog's current skills.
func New(h Host, opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{h: h, opts: opts, logger: logger, tools: map[string]toolSpec{}, resources: map[string]resourceFile{},
		roots: map[*mcp.ServerSession][]string{}, activated: map[string]bool{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "skillhost", Title: "skillhost", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "Agent Skills served by skillhost. Use " + SearchTool + " to find the skills that fit a task and " +
			ActivateTool + " to read one's instructions; script tools are named <skill>__<tool> and run sandboxed.",
		Logger: logger,
		RootsListChangedHandler: func(_ context.Context, req *mcp.RootsListChangedRequest) {
			s.rootsMu.Lock()
			delete(s.roots, req.Session) // the next call asks again
			s.rootsMu.Unlock()
		},
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
		},
	})
	s.mcp.AddReceivingMiddleware(s.activateFirst)
	s.addDisclosureTools()
	s.Sync()
	return s
}

// activateFirst answers a call to a script tool not offered yet because
// its skill has not been activated (ToolsOnActivate) with what to do,
// rather than the SDK's bare "unknown tool".
func (s *Server) activateFirst(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || call.Params == nil {
			return next(ctx, method, req)
		}
		name := call.Params.Name
		s.mu.Lock()
		_, offered := s.tools[name]
		var owner string
		for sk, tools := range s.names {
			for _, n := range tools {
				if n == name {
					owner = sk
				}
			}
		}
		s.mu.Unlock()
		if offered || owner == "" {
			return next(ctx, method, req)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
			"tool %q belongs to skill %q, whose tools are offered once it is activated: call %s with {\"name\": %q} first", name, owner, ActivateTool, owner)}
	}
}

// Run serves one client over t (for example &mcp.StdioTransport{}) until
// it disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.mcp.Run(ctx, t) }

// Sync brings the offered tools and resources in line with the catalog:
// new ones are added, gone or changed ones removed or replaced. The SDK
// announces the changes to connected clients with list-changed
// notifications. Call it after the catalog reloads.
func (s *Server) Sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	skills := s.sortedSkills()
	s.syncTools(skills)
	s.syncResources(skills)
}

// sortedSkills are the catalog's skills by name, the order tool names are
// given in.
func (s *Server) sortedSkills() []*skill.Skill {
	skills := s.h.Catalog().All()
	sort.Slice(skills, func(i, j int) bool { return skills[i].Name < skills[j].Name })
	return skills
}

// syncTools offers the script tools of skills (sorted by name) that
// should be offered; s.mu is held.
func (s *Server) syncTools(skills []*skill.Skill) {
	tools := map[string]toolSpec{}
	s.names = map[string]map[string]string{}
	if !s.opts.DisclosureOnly {
		for _, n := range skill.NameTools(skills, map[string]bool{SearchTool: true, ActivateTool: true}) {
			if s.names[n.Skill.Name] == nil {
				s.names[n.Skill.Name] = map[string]string{}
			}
			s.names[n.Skill.Name][n.Tool.Name] = n.Name
			if s.opts.ToolsOnActivate && !s.activated[n.Skill.Name] {
				continue
			}
			tools[n.Name] = newToolSpec(n.Skill, n.Tool)
		}
	}
	gone, added := diff(s.tools, tools)
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	for _, name := range added {
		s.mcp.AddTool(scriptTool(name, tools[name]), s.scriptHandler(tools[name]))
	}
	s.tools = tools
}

// syncResources offers the files of skills; s.mu is held.
func (s *Server) syncResources(skills []*skill.Skill) {
	resources := map[string]resourceFile{}
	for _, sk := range skills {
		for _, f := range skillFiles(sk) {
			resources[f.uri()] = f
		}
	}
	for uri := range resources {
		if _, err := url.Parse(uri); err != nil { // AddResource would panic
			s.logger.Warn("skipping a resource with an invalid URI", "uri", uri, "err", err)
			delete(resources, uri)
		}
	}
	goneURIs, addedURIs := diff(s.resources, resources)
	if len(goneURIs) > 0 {
		s.mcp.RemoveResources(goneURIs...)
	}
	for _, uri := range addedURIs {
		f := resources[uri]
		s.mcp.AddResource(&mcp.Resource{
			URI: uri, Name: f.skill + "/" + f.rel, MIMEType: mimeType(f.rel), Size: f.size,
			Description: fmt.Sprintf("File %s of skill %s", f.rel, f.skill),
		}, s.resourceHandler(f))
	}
	s.resources = resources
}

// diff compares what is offered (old) with what should be (cur): gone are
// the keys to withdraw (removed or changed), added those to offer (new or
// changed).
func diff[K comparable, V comparable](old, cur map[K]V) (gone, added []K) {
	for k, v := range old {
		if c, ok := cur[k]; !ok || c != v {
			gone = append(gone, k)
		}
	}
	for k, v := range cur {
		if o, ok := old[k]; !ok || o != v {
			added = append(added, k)
		}
	}
	return gone, added
}

// ToolNames returns the names of the offered script tools, sorted.
func (s *Server) ToolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.tools))
	for n := range s.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// toolNamesOf returns the MCP names of sk's tools, in sk's tool order.
func (s *Server) toolNamesOf(sk *skill.Skill) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[sk.Name]
}

// resourcesOf returns the URIs of the resources offered for sk: its
// SKILL.md first, then the rest in order. They come from the last Sync, so
// every one listed is one a client can read.
func (s *Server) resourcesOf(sk *skill.Skill) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var files []resourceFile
	for _, f := range s.resources {
		if f.skill == sk.Name && f.dir == sk.Dir {
			files = append(files, f)
		}
	}
	main := filepath.ToSlash(filepath.Base(sk.File))
	sort.Slice(files, func(i, j int) bool {
		if (files[i].rel == main) != (files[j].rel == main) {
			return files[i].rel == main
		}
		return files[i].rel < files[j].rel
	})
	uris := make([]string, 0, len(files))
	for _, f := range files {
		uris = append(uris, f.uri())
	}
	return uris
}

// Watch reloads the catalog and calls Sync whenever the files under the
// skill roots change, checking every interval, until ctx ends. Polling,
// rather than file-system notifications, sees every kind of change (edits,
// renames, whole skills copied in, network file systems) with one code
// path, at the cost of up to one interval of delay.
func (s *Server) Watch(ctx context.Context, interval time.Duration) {
	// Start from what is on disk now. The catalog was loaded before this
	// first look (by New, or earlier by the caller), so it is reloaded
	// once: a skill written in between would otherwise go unseen until the
	// next change. The extra load is about a millisecond for a dozen skills.
	last := fingerprint(s.h.Catalog().Roots())
	s.h.Catalog().Reload()
	s.Sync()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if cur := fingerprint(s.h.Catalog().Roots()); cur != last {
			last = cur
			s.h.Catalog().Reload()
			s.Sync()
		}
	}
}
