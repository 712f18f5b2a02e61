package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/skill"
)

// maxListedFiles bounds the file list skill_activate returns.
const maxListedFiles = 500

func toolDescription(sk *skill.Skill, t skill.Tool) string {
	desc := t.Name
	if t.Description != "" && t.Description != t.Name {
		desc = t.Description
	}
	// The tool's own words, not its skill's description again: a catalog
	// of many tools would repeat each skill's paragraph once per tool.
	return fmt.Sprintf("%s (a tool of skill %s; %s %q reads its instructions). Runs sandboxed; the result is the script's output, isError when it fails or times out.",
		strings.TrimSpace(desc), sk.Name, ActivateTool, sk.Name)
}

// scriptArgs decodes a script tool's arguments, as skill.Tool.Parameters
// describes them: either args, split like a POSIX shell, or argv, passed
// exactly.
type scriptArgs struct {
	Args *string  `json:"args,omitempty"`
	Argv []string `json:"argv,omitempty"`
}

func newToolSpec(sk *skill.Skill, t skill.Tool) toolSpec {
	schema, err := json.Marshal(t.Parameters())
	if err != nil {
		panic(fmt.Sprintf("tool %s of skill %s: parameters: %v", t.Name, sk.Name, err)) // a map of plain values always marshals
	}
	return toolSpec{skill: sk.Name, tool: t.Name, description: toolDescription(sk, t), schema: string(schema)}
}

func scriptTool(name string, spec toolSpec) *mcp.Tool {
	return &mcp.Tool{
		Name:        name,
		Title:       spec.skill + " / " + spec.tool,
		Description: spec.description,
		InputSchema: json.RawMessage(spec.schema),
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
	}
}

// scriptHandler runs one script tool. Output is sent as progress
// notifications while the script runs when the client asked for progress;
// cancelling the call stops the script and its process tree.
func (s *Server) scriptHandler(spec toolSpec) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in scriptArgs
		if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				return errorResult(fmt.Sprintf("arguments: %v (expected {\"args\": string} or {\"argv\": [string]})", err)), nil
			}
		}
		if in.Args != nil && len(in.Argv) > 0 {
			return errorResult("arguments: pass either args or argv, not both"), nil
		}
		run := ToolCall{Skill: spec.skill, Tool: spec.tool, Argv: in.Argv, ArgString: in.Args, Strategy: s.opts.Strategy, Workspace: s.opts.Workspace}
		if s.opts.Workspace != "" && req.Session != nil {
			roots, ask := s.callRoots(ctx, req)
			if ask != nil {
				return ask, nil
			}
			// A client names its roots; the operator decides which may
			// be a workspace (a write grant with read-write).
			clamped, err := s.clampRoots(roots)
			if err != nil {
				return errorResult(err.Error()), nil
			}
			run.Roots = clamped
		}
		if res := s.reviewAnswered(req); res != nil {
			return res, nil
		}
		var review *pendingReview
		var reviewRun string
		if s.opts.Review && req.Session != nil {
			if ip := req.Session.InitializeParams(); ip != nil && ip.ProtocolVersion >= mrtrVersion {
				// No request may go to the client while this one is served:
				// the changes are kept, and the answer comes with the call
				// made again (reviewAnswered).
				run.Review = func(_ context.Context, id, summary string) bool {
					review, reviewRun = &pendingReview{summary: summary}, id
					return false
				}
			} else {
				run.Review = func(ctx context.Context, _, summary string) bool { return elicitApproval(ctx, req.Session, summary) }
			}
		}
		var output func(string) error
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			var sent int
			output = func(delta string) error {
				sent += len(delta)
				return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Message: delta, Progress: float64(sent),
				})
			}
		}
		res, err := s.h.RunTool(ctx, run, output)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return errorResult(toolArgsError(err.Error())), nil
		}
		if review != nil && canElicit(req.Session) {
			review.res = res
			s.reviewsMu.Lock()
			if s.reviews == nil {
				s.reviews = map[reviewKey]*pendingReview{}
			}
			s.reviews[reviewKey{req.Session, reviewRun}] = review
			s.reviewsMu.Unlock()
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{reviewInput: reviewQuestion(review.summary)}, RequestState: reviewRun}, nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: res.Text}},
			StructuredContent: res.Structured,
			IsError:           res.Failed,
		}, nil
	}
}

// toolArgsError speaks of the tool's args where the host's error names the
// CLI's flag (--args): a client passes args in the call, not a flag.
func toolArgsError(msg string) string {
	if before, rest, ok := strings.Cut(msg, "--args: "); ok {
		return before + "args: " + rest + " (args is split like a POSIX shell; pass argv for exact arguments)"
	}
	return msg
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"what the user wants done, in their words"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many skills (default: the configured match.limit)"`
}

// SearchHit is one skill skills_search found.
type SearchHit struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	// Matched says the score passes the threshold of automatic
	// activation; a search lists the best candidates either way.
	Matched bool     `json:"matched"`
	Tools   []string `json:"tools"`
}

// SearchResult is what skills_search returns.
type SearchResult struct {
	Skills []SearchHit `json:"skills"`
}

type activateArgs struct {
	Name string `json:"name" jsonschema:"the skill's name, as skills_search gives it"`
}

// ActivatedTool is a script tool of an activated skill.
type ActivatedTool struct {
	Name        string `json:"name"`
	Tool        string `json:"tool"`
	Description string `json:"description"`
}

// Activation is what skill_activate returns.
type Activation struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Instructions string          `json:"instructions"`
	Directory    string          `json:"directory"`
	Files        []string        `json:"files"`
	Resources    []string        `json:"resources"`
	Tools        []ActivatedTool `json:"tools"`
}

func (s *Server) addDisclosureTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: SearchTool, Title: "Search skills",
		Description: "Rank the available Agent Skills for a task; returns the best candidates with their scores (0 to 1), whether each passes the threshold of automatic activation, and their tools (offered once the skill is activated). " +
			"Call " + ActivateTool + " with a name to read its instructions.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, SearchResult, error) {
		if strings.TrimSpace(in.Query) == "" {
			return nil, SearchResult{}, fmt.Errorf("query is empty")
		}
		ms, threshold, err := s.h.Search(ctx, in.Query, max(in.Limit, 0))
		if err != nil {
			return nil, SearchResult{}, err
		}
		out := SearchResult{Skills: []SearchHit{}}
		for _, m := range ms {
			names := s.toolNamesOf(m.Skill)
			hit := SearchHit{Name: m.Skill.Name, Description: m.Skill.Description, Score: float64(int(m.Score*10000+0.5)) / 10000,
				Matched: m.Score >= threshold, Tools: []string{}}
			for _, t := range m.Skill.Tools {
				if n, ok := names[t.Name]; ok {
					hit.Tools = append(hit.Tools, n)
				}
			}
			out.Skills = append(out.Skills, hit)
		}
		return nil, out, nil
	})
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: ActivateTool, Title: "Activate a skill",
		Description: "Load one Agent Skill: its instructions (follow them), its directory, its files, the resources to read and the tools to call.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in activateArgs) (*mcp.CallToolResult, Activation, error) {
		sk, err := s.h.Catalog().Find(in.Name)
		if err != nil {
			return nil, Activation{}, err
		}
		if s.opts.ToolsOnActivate {
			s.activate(sk.Name)
		}
		// The instructions are the catalog's; the resources are those
		// offered, rather than a second walk of the skill's files.
		a := Activation{
			Name: sk.Name, Description: sk.Description, Instructions: sk.Instructions, Directory: sk.Dir,
			Files: listFiles(sk.Dir), Resources: s.resourcesOf(sk), Tools: []ActivatedTool{},
		}
		names := s.toolNamesOf(sk)
		for _, t := range sk.Tools {
			if n, ok := names[t.Name]; ok {
				a.Tools = append(a.Tools, ActivatedTool{Name: n, Tool: t.Name, Description: t.Description})
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: activationText(a)}}}, a, nil
	})
}

// activationText puts the instructions first, as an agent reads them.
func activationText(a Activation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Skill %s\n\n%s\n\nDirectory: %s\n", a.Name, a.Instructions, a.Directory)
	if len(a.Tools) > 0 {
		b.WriteString("\nTools:\n")
		for _, t := range a.Tools {
			fmt.Fprintf(&b, "- %s: %s\n", t.Name, t.Description)
		}
	}
	if len(a.Resources) > 0 {
		b.WriteString("\nResources:\n")
		for _, r := range a.Resources {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	return b.String()
}

// listFiles returns the files under dir, relative and slash-separated, not
// following symlinked directories and skipping hidden files and hidden and
// vendored directories.
func listFiles(dir string) []string {
	files := []string{}
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || len(files) >= maxListedFiles {
			return fs.SkipDir
		}
		if e.IsDir() {
			if p != dir && (strings.HasPrefix(e.Name(), ".") || catalog.Skipped(e.Name())) {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			return nil
		}
		if rel, err := filepath.Rel(dir, p); err == nil {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// rootsTimeout bounds how long a call waits for the client's roots.
const rootsTimeout = 10 * time.Second

// rootsInput names the roots in a multi round-trip tool call.
const rootsInput = "roots"

// mrtrVersion is the first protocol version in which a server asks a
// client for input by answering a call with input requests (SEP-2322)
// rather than by sending it a request.
const mrtrVersion = "2026-07-28"

// callRoots returns the roots of req's client as local directories, from
// the call itself (the answer to our input request), from what the client
// said before, or by asking: with a client of mrtrVersion or later, ask is
// the result that asks it (the client answers and calls again); with an
// older one, roots/list is sent. A client that did not declare the roots
// capability has none and is not asked.
func (s *Server) callRoots(ctx context.Context, req *mcp.CallToolRequest) (dirs []string, ask *mcp.CallToolResult) {
	ss := req.Session
	if res, ok := req.Params.InputResponses[rootsInput].(*mcp.ListRootsResult); ok {
		return s.rememberRoots(ss, rootDirs(res)), nil
	}
	s.rootsMu.Lock()
	dirs, known := s.roots[ss]
	s.rootsMu.Unlock()
	if known {
		return dirs, nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.RootsV2 == nil {
		// A client that did not declare roots has none to give, and one
		// that cannot answer roots/list would keep its first call waiting
		// rootsTimeout for nothing.
		return s.rememberRoots(ss, []string{}), nil
	}
	if ip.ProtocolVersion >= mrtrVersion {
		return nil, &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{rootsInput: &mcp.ListRootsParams{}}}
	}
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := ss.ListRoots(ctx, &mcp.ListRootsParams{})
	if err != nil {
		s.logger.Debug("the client gave no roots", "err", err)
	}
	return s.rememberRoots(ss, rootDirs(res)), nil
}

// rememberRoots keeps dirs as ss's roots until its client says they
// changed, and returns them.
func (s *Server) rememberRoots(ss *mcp.ServerSession, dirs []string) []string {
	s.rootsMu.Lock()
	s.roots[ss] = dirs
	s.rootsMu.Unlock()
	return dirs
}

// rootDirs are the local directories of a client's file:// roots.
func rootDirs(res *mcp.ListRootsResult) []string {
	dirs := []string{}
	if res == nil {
		return dirs
	}
	for _, r := range res.Roots {
		if u, err := url.Parse(r.URI); err == nil && u.Scheme == "file" && filepath.IsAbs(u.Path) {
			dirs = append(dirs, filepath.Clean(u.Path))
		}
	}
	return dirs
}

// activate offers the script tools of the skill named, if not yet offered;
// the resources do not change.
func (s *Server) activate(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.activated[name] {
		return
	}
	s.activated[name] = true
	s.syncTools(s.sortedSkills())
}

// elicitApproval asks the client's user whether to apply a run's changes,
// when the client can elicit; otherwise, or on any answer but an accepted
// yes, they are not applied.
func elicitApproval(ctx context.Context, ss *mcp.ServerSession, summary string) bool {
	if !canElicit(ss) {
		return false
	}
	res, err := ss.Elicit(ctx, reviewQuestion(summary))
	return err == nil && approved(res)
}

// reviewInput names the review's question among a call's input requests.
const reviewInput = "review"

func reviewQuestion(summary string) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Message: summary + "\nApply these changes? (Protected paths are refused either way.)",
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"apply": map[string]any{"type": "boolean", "description": "apply the run's changes"}},
			"required":   []string{"apply"},
		},
	}
}

func approved(res *mcp.ElicitResult) bool {
	if res == nil || res.Action != "accept" {
		return false
	}
	apply, _ := res.Content["apply"].(bool)
	return apply
}

// canElicit reports whether the client said it can ask its user.
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// reviewAnswered finishes a call made again with the answer to its
// review: the run's changes are applied on a yes, and the run's result is
// given with a line on what became of them. It is nil for any other call.
func (s *Server) reviewAnswered(req *mcp.CallToolRequest) *mcp.CallToolResult {
	answer, ok := req.Params.InputResponses[reviewInput].(*mcp.ElicitResult)
	if !ok || req.Params.RequestState == "" || req.Session == nil {
		return nil
	}
	key := reviewKey{req.Session, req.Params.RequestState}
	s.reviewsMu.Lock()
	p := s.reviews[key]
	delete(s.reviews, key)
	s.reviewsMu.Unlock()
	if p == nil {
		return errorResult(fmt.Sprintf("no run %q of this session awaits a review", req.Params.RequestState))
	}
	note := fmt.Sprintf("\n[skillhost: the review declined the run's changes; kept: skillhost changes apply %s]", req.Params.RequestState)
	if approved(answer) {
		applied, err := s.h.ApplyKept(req.Params.RequestState)
		if err != nil {
			note = fmt.Sprintf("\n[skillhost could not apply the run's changes: %v]", err)
		} else {
			note = "\n" + applied
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: p.res.Text + note}},
		StructuredContent: p.res.Structured,
		IsError:           p.res.Failed,
	}
}
