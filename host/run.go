package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/changeset"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/sandbox"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/host/term"
	"github.com/skillhost/skillhost/internal/shellwords"
	"github.com/skillhost/skillhost/shared"
)

// RunRequest names one tool call.
type RunRequest struct {
	Skill string
	Tool  string
	// Args are passed as they are; ArgString, if set instead, is split like
	// a POSIX shell.
	Args      []string
	ArgString *string
	// Strategy overrides sandbox.strategy for this run ("" keeps it).
	Strategy string
	// ChunkedOutput leaves the report's Output empty: its text is read
	// with WriteText (or MarshalJSON), from the pieces the output arrived
	// in. It saves joining them, which for a large output means holding it
	// twice (the CLI).
	ChunkedOutput bool
	// Workspace overrides the skill's workspace grant for this run: none,
	// read or read-write ("" keeps the configured one).
	Workspace string
	// WorkspaceDirs, when set, are the workspace instead of the host's
	// working directory (an MCP client's roots): each is granted as the
	// workspace is, and the first is the script's working directory.
	WorkspaceDirs []string
	// Parent, when set, makes the run's events children of the embedder's
	// events context (say, the agent turn that called the tool): they carry
	// its run id as parent_run_id, a fresh message id and the scope
	// events.ChildScope, and share its sequence counter; run.started names
	// the parent in its data (parent_run_id). They go to Run's publish when
	// that is not nil, else to Parent's own callback.
	Parent *events.Context
	// Review, when set, is shown a staged run's changes before any is
	// applied; false keeps them all, unapplied, for `skillhost changes`.
	Review func(ctx context.Context, run string, changes []changeset.Change) bool
}

// interruption says how a run that did not end by itself ended, or "".
func interruption(ctx context.Context, r shared.Result) string {
	switch {
	case ctx.Err() != nil:
		return "the run was interrupted"
	case r.TimedOut:
		return "the run timed out"
	case r.Signal != "":
		return "the run was killed by " + r.Signal
	}
	return ""
}

// UsageError is a request that names something that does not exist or
// cannot be parsed; the CLI exits with status 2 for it.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Resolve finds the skill and tool of req. An empty Tool means the skill's
// first tool, or a placeholder when it has none.
func (h *Host) Resolve(req RunRequest) (*skill.Skill, *skill.Tool, error) {
	s, err := h.Catalog.Find(req.Skill)
	if err != nil {
		return nil, nil, &UsageError{err}
	}
	if req.Tool == "" { // any tool: for explaining a skill's confinement
		if len(s.Tools) > 0 {
			return s, &s.Tools[0], nil
		}
		return s, &skill.Tool{Name: "(none)", Script: filepath.Join(s.Dir, "scripts", "<script>"), Interpreter: []string{"/bin/sh"}}, nil
	}
	t := s.Tool(req.Tool)
	if t == nil {
		names := make([]string, len(s.Tools))
		for i, tt := range s.Tools {
			names[i] = tt.Name
		}
		msg := fmt.Sprintf("skill %q has no tool %q", s.Name, req.Tool)
		if sug := catalog.Suggest(req.Tool, names); len(sug) > 0 {
			msg += fmt.Sprintf("; did you mean %s?", strings.Join(quoteAll(sug), ", "))
		} else if len(names) > 0 {
			msg += fmt.Sprintf("; it has %s", strings.Join(quoteAll(names), ", "))
		} else {
			msg += "; it has no tools"
		}
		return nil, nil, &UnknownToolError{Skill: s.Name, Tool: req.Tool, msg: msg}
	}
	return s, t, nil
}

// prepared is a tool call ready to hand to an executor.
type prepared struct {
	skill    *skill.Skill
	tool     *skill.Tool
	grant    grant.Grant
	request  shared.Request
	exec     shared.Executor
	strategy string
	confines bool // whether the strategy confines the script
	// readsConfined: its backend keeps the script's reads to the grant on
	// this machine (see unseenArguments).
	readsConfined bool
	// unborn are protected paths that did not exist before the run: any
	// the run created is moved aside after it (see setAside). Only for
	// direct writes: a staged run changes nothing of the host's.
	unborn []string
	// started is when a staged run (request.Stage set) started.
	started time.Time
}

// prepare resolves a call: skill, tool, arguments, grant, command line,
// environment, working directory and executor.
func (h *Host) prepare(req RunRequest) (*prepared, error) {
	s, t, err := h.Resolve(req)
	if err != nil {
		return nil, err
	}
	h.timing.mark("catalog lookup")
	args := req.Args
	if req.ArgString != nil {
		if args, err = shellwords.Split(*req.ArgString); err != nil {
			return nil, &UsageError{fmt.Errorf("--args: %w", err)}
		}
	}
	computed := h.Grant(s, req.Workspace, req.WorkspaceDirs...)
	g := computed.Grant
	for _, w := range computed.Warnings {
		h.Warn("%s", w)
	}
	h.timing.mark("grant")
	dir := h.env.Cwd
	if len(req.WorkspaceDirs) > 0 {
		dir = req.WorkspaceDirs[0]
	}
	if h.Config.Scripts.Workdir == config.WorkdirSkill {
		dir = s.Dir
	}
	exec, choice := h.executor(g, req.Strategy)
	skillDir := h.resolved(s.Dir) // once: the checks and the request see the same directory
	cmd, err := h.command(s, skillDir, t, g, args, scriptEnv(os.Environ(), h.Config.Sandbox.Env), dir, choice.Confines)
	if err != nil {
		return nil, err
	}
	request := h.request(skillDir, g, cmd.argv, dir, cmd.env)
	request.ExecPaths = append(request.ExecPaths, cmd.trees...)
	return &prepared{skill: s, tool: t, grant: g, request: request, exec: exec, strategy: choice.Name, confines: choice.Confines, unborn: computed.Unborn}, nil
}

// Run executes a tool and waits for it. publish, if not nil, receives the
// run's events as they happen (see package events): run.started, one
// tool_call.output.delta per output chunk as the plugin streams it, then
// run.completed, run.failed or run.interrupted (when ctx ended the run),
// and stream.ended last. Cancelling ctx stops the script and its process
// tree. A script that runs and fails is a successful Run with a non-zero
// exit; an error means it could not run.
func (h *Host) Run(ctx context.Context, req RunRequest, publish events.PublishFunc) (*RunReport, error) {
	p, err := h.prepare(req)
	if err != nil {
		h.newRunEvents(newRunID(), req.Parent, publish).failed(ctx, err)
		return nil, err
	}
	ev := h.newRunEvents(p.request.RunID, req.Parent, publish)
	notEnforced, err := h.routeEgress(ctx, p)
	if err != nil {
		err = runFailed(p, err)
		ev.failed(ctx, err)
		return nil, err
	}
	direct, err := h.stageWrites(ctx, p)
	if err != nil {
		err = runFailed(p, err)
		ev.failed(ctx, err)
		return nil, err
	}
	notEnforced = append(notEnforced, direct...)
	if p.confines {
		// Asked before the run, when the plugin has just answered: after
		// it, a plugin that died would be started again for this.
		info, err := p.exec.Info(ctx)
		p.readsConfined = err == nil && info.Enforces.FSRead && !info.Remote
	}
	ev.started(p)
	h.timing.mark("request (command line, environment, egress, stage)")
	out := &cappedBuffer{limit: int64(h.Config.Sandbox.OutputLimit)}
	r, err := p.exec.Execute(ctx, p.request, func(b []byte) error {
		if n := out.write(b); n > 0 {
			ev.output(b[:n])
		}
		return nil
	})
	h.timing.mark("execute (plugin side, as seen from the host)")
	if err != nil {
		// What the run changed before it was stopped or its plugin
		// failed is kept, never applied.
		why := "its sandbox plugin failed"
		if ctx.Err() != nil {
			why = "the run was interrupted"
		}
		if rep := h.settle(ctx, p, why, nil); rep != nil && len(rep.Kept) > 0 {
			err = &KeptError{Err: err, Run: rep.Run, Paths: len(rep.Kept), Why: why}
		}
		err = runFailed(p, err)
		ev.failed(ctx, err)
		return nil, err
	}
	r.Truncated = r.Truncated || out.truncated
	r.NotEnforced = append(r.NotEnforced, notEnforced...)
	h.remedies(p.skill.Name, r.Violations, p.request.Argv...)
	r.Violations = append(r.Violations, h.unseenArguments(p, r)...)
	for i, v := range r.Violations {
		if v.Kind == "discarded" && v.Path == "" {
			r.Violations[i].Path = v.Target // the wire carries the target
		}
	}
	var changes *ChangeReport
	if p.request.Stage != "" {
		changes = h.settle(ctx, p, interruption(ctx, r), req.Review)
		r.Violations = append(r.Violations, protectedViolations(changes)...)
	} else {
		r.Violations = append(r.Violations, setAside(p.unborn, p.request.RunID)...)
	}
	h.timing.mark("settle (staged writes applied, or created paths set aside)")
	rep := &RunReport{Skill: p.skill.Name, Tool: p.tool.Name, ExitCode: r.ExitCode, Signal: r.Signal, TimedOut: r.TimedOut,
		Truncated: r.Truncated, DurationMS: r.Duration.Milliseconds(), Grant: p.grant, Strategy: p.strategy, Worker: r.Worker,
		Violations: r.Violations, NotEnforced: r.NotEnforced, Changes: changes}
	if req.ChunkedOutput {
		rep.chunks = out.chunks
	} else {
		rep.Output = out.String()
	}
	ev.finished(ctx, rep)
	return rep, nil
}

// Explain asks the strategy's plugin how it would confine a tool call,
// without running it: the Seatbelt profile, the Landlock policy.
func (h *Host) Explain(ctx context.Context, req RunRequest) (shared.Explanation, string, error) {
	p, err := h.prepare(req)
	if err != nil {
		return shared.Explanation{}, "", err
	}
	ex, ok := p.exec.(shared.Explainer)
	if !ok {
		return shared.Explanation{}, p.strategy, fmt.Errorf("strategy %s: %w", p.strategy, shared.ErrNotExplainable)
	}
	e, err := ex.Explain(ctx, p.request)
	if err != nil {
		return shared.Explanation{}, p.strategy, fmt.Errorf("explain %s/%s with %s: %w", p.skill.Name, p.tool.Name, p.strategy, err)
	}
	return e, p.strategy, nil
}

func (h *Host) request(skillDir string, g grant.Grant, argv []string, dir string, env []string) shared.Request {
	sb := h.Config.Sandbox
	return shared.Request{
		RunID:       newRunID(),
		Argv:        argv,
		Dir:         dir,
		Env:         env,
		Grant:       sandbox.WireGrant(g),
		SkillDir:    skillDir,
		OutputLimit: int64(sb.OutputLimit),
		KillGrace:   time.Duration(sb.KillGrace),
		Limits: shared.Limits{
			OpenFiles: int64(sb.Limits.OpenFiles),
			FileSize:  int64(sb.Limits.FileSize),
			Processes: int64(sb.Limits.Processes),
			Memory:    int64(sb.Limits.Memory),
		},
		ExecPaths: h.execPaths(),
	}
}

// resolved returns path with every symlink resolved, as grant paths are,
// or path itself if it cannot be resolved.
func (h *Host) resolved(path string) string {
	if r, err := grant.Resolve(path, h.env); err == nil {
		return r
	}
	return path
}

// execPaths resolves sandbox.interpreters; unusable entries are warned
// about once and skipped.
func (h *Host) execPaths() []string {
	var out []string
	for _, p := range h.Config.Sandbox.Interpreters {
		if p == config.InterpretersAuto {
			continue
		}
		rp, err := grant.Resolve(p, h.env)
		if err != nil {
			h.Warn("sandbox.interpreters entry %q: %v; ignored", p, err)
			continue
		}
		out = append(out, rp)
	}
	return out
}

func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Text renders a result the way an agent sees it: the output verbatim on
// success, otherwise an "Error (...)" header before it.
func (r *RunReport) Text() string {
	var b strings.Builder
	_ = r.WriteText(&b)
	return b.String()
}

// WriteText writes Text to w without building it in memory first.
//
// On a terminal (see term.IsTerminal) the script's bytes pass term.Printable,
// so escape sequences in them show instead of acting; to a pipe or a file
// they are written exactly.
func (r *RunReport) WriteText(w io.Writer) error {
	if term.IsTerminal(w) {
		tw := term.NewWriter(w)
		if err := r.writeText(tw); err != nil {
			return err
		}
		return tw.Flush()
	}
	return r.writeText(w)
}

// Verdict is how the run ended in Text's words without its output:
// "Error (exit 3)", "Error (signal SIGKILL)", "Error (timed out) [killed:
// exceeded 5s]"; "" for success. It is what a terminal shows after output
// it already streamed.
func (r *RunReport) Verdict() string {
	head, tail := r.headTail()
	if head == "" {
		return ""
	}
	return strings.TrimSuffix(head, ":\n") + strings.Replace(tail, "\n", " ", 1)
}

// headTail are what Text puts before and after the output.
func (r *RunReport) headTail() (head, tail string) {
	switch {
	case r.TimedOut:
		return "Error (timed out):\n", fmt.Sprintf("\n[killed: exceeded %ss]", grant.Seconds(r.Grant.Timeout))
	case r.Signal != "":
		return fmt.Sprintf("Error (signal %s):\n", r.Signal), ""
	case r.ExitCode != 0:
		return fmt.Sprintf("Error (exit %d):\n", r.ExitCode), ""
	}
	return "", ""
}

func (r *RunReport) writeText(w io.Writer) error {
	head, tail := r.headTail()
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	if r.chunks == nil {
		if _, err := io.WriteString(w, r.Output); err != nil {
			return err
		}
	}
	for _, c := range r.chunks {
		if _, err := w.Write(c); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, tail); err != nil {
		return err
	}
	noted := tail != ""
	for _, n := range r.Changes.notes() {
		if _, err := io.WriteString(w, "\n"+n); err != nil {
			return err
		}
		noted = true
	}
	// Refused connections, allowed hosts the proxy could not reach and
	// arguments the sandbox kept from the script, in words the model can
	// act on: an agent sees the text, not the violations.
	for _, v := range r.Violations {
		line := networkLine(v)
		if v.Kind == Unseen {
			line = "[skillhost: " + v.Detail + "]"
		}
		if line != "" {
			if _, err := io.WriteString(w, "\n"+line); err != nil {
				return err
			}
			noted = true
		}
	}
	if noted {
		// The last of skillhost's lines ends like a line.
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return nil
}

// OK reports whether the script ran and exited 0.
func (r *RunReport) OK() bool { return !r.TimedOut && r.Signal == "" && r.ExitCode == 0 }

// cappedBuffer keeps at most limit bytes of script output (plus the
// backend's truncation marker): a defence against a backend that ignores
// the limit. It keeps the pieces as they came, so that holding the output
// never costs more than the output (a growing buffer reallocates and
// copies up to twice its size).
type cappedBuffer struct {
	mu        sync.Mutex
	chunks    [][]byte
	size      int64
	limit     int64
	truncated bool
}

// slack admits the backend's truncation marker after limit bytes.
const slack = 256

func (c *cappedBuffer) write(b []byte) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit + slack - c.size
	if room <= 0 {
		c.truncated = true
		return 0
	}
	if int64(len(b)) > room {
		b = b[:room]
		c.truncated = true
	}
	if len(b) == 0 {
		return 0
	}
	c.chunks = append(c.chunks, bytes.Clone(b)) // emit's slice may be reused
	c.size += int64(len(b))
	return len(b)
}

// String joins the pieces into one string, copying each once.
func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	b.Grow(int(c.size))
	for _, p := range c.chunks {
		b.Write(p)
	}
	return b.String()
}

func quoteAll(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return q
}
