package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillhost/skillhost/host/changeset"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/host/term"
	"github.com/skillhost/skillhost/shared"
)

// ChangeReport is what a staged run changed and what the host did with it.
type ChangeReport struct {
	// Run is the run's id, the RUN of `skillhost changes`.
	Run string `json:"run"`
	// Applied are on the host now; Refused were stopped by the protection
	// policy; Conflicts changed on the host meanwhile (the run's version
	// is beside the host's); Kept were not applied because the run was
	// interrupted or the review declined them.
	Applied   []changeset.Change `json:"applied"`
	Refused   []changeset.Change `json:"refused"`
	Conflicts []changeset.Change `json:"conflicts"`
	Kept      []changeset.Change `json:"kept"`
	// Discarded were written outside every write grant, to the run's
	// private /tmp, where the host has the directory: kept, not applied.
	Discarded []changeset.Change `json:"discarded"`
	// Command applies what was not applied, when something was kept.
	Command string `json:"command,omitempty"`
	// Interrupted says why nothing was applied, when the run did not end
	// by itself.
	Interrupted string `json:"interrupted,omitempty"`
}

func newChangeReport(run string) *ChangeReport {
	return &ChangeReport{Run: run, Applied: []changeset.Change{}, Refused: []changeset.Change{}, Conflicts: []changeset.Change{}, Kept: []changeset.Change{}, Discarded: []changeset.Change{}}
}

// sort adds each of cs to the list of its outcome.
func (rep *ChangeReport) sort(cs []changeset.Change) {
	for _, c := range cs {
		switch c.Outcome {
		case changeset.Applied:
			rep.Applied = append(rep.Applied, c)
		case changeset.Refused:
			rep.Refused = append(rep.Refused, c)
		case changeset.Conflict:
			rep.Conflicts = append(rep.Conflicts, c)
		case changeset.Discarded:
			rep.Discarded = append(rep.Discarded, c)
		default:
			rep.Kept = append(rep.Kept, c)
		}
	}
}

// ChangeStore holds the stages of runs whose changes were not all applied:
// $XDG_STATE_HOME/skillhost/changes (~/.local/state/skillhost/changes).
func (h *Host) ChangeStore() changeset.Store {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" || !filepath.IsAbs(state) {
		state = filepath.Join(h.env.Home, ".local", "state")
	}
	return changeset.Store{Dir: filepath.Join(state, "skillhost", "changes")}
}

// changePolicy is the protection policy of the configuration: the
// defaults, sandbox.protected and sandbox.unprotected, every skill root,
// and the hook directories git would use.
func (h *Host) changePolicy(s *skill.Skill) changeset.Policy {
	sb := h.Config.Sandbox
	p := changeset.New(sb.Protected, sb.Unprotected)
	p.Exempt = append(p.Exempt, grant.ResolveAll(sb.Unprotected, h.env)...)
	for _, r := range h.skillRoots(s) {
		p.Trees = append(p.Trees, changeset.Protected{Name: r, Why: "a skill root: skills found there run later"})
	}
	var global []string
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		global = append(global, filepath.Join(x, "git", "config"))
	} else {
		global = append(global, filepath.Join(h.env.Home, ".config", "git", "config"))
	}
	global = append(global, filepath.Join(h.env.Home, ".gitconfig"))
	p.Hooks = changeset.GitHooks(global)
	return p
}

// WritesMeaning says in one line what a write grant means here.
func (h *Host) WritesMeaning() string {
	if h.Config.Sandbox.Writes == config.WritesDirect {
		return "writes:   direct (sandbox.writes): a confined run writes fs_write's trees itself; nothing judges what it leaves there"
	}
	return "writes:   staged: the run changes a copy; afterwards skillhost applies its changes, except to protected paths\n" +
		"          (.git at any depth, hooks, shell start-up files, agent and editor settings, skill roots: docs/sandbox.md),\n" +
		"          and keeps what it did not apply for skillhost changes"
}

// KeptError is a run that did not finish (interrupted, or its plugin
// failed) after changing files: Err says why it ended, and its changes
// are kept, not applied, under Run.
type KeptError struct {
	Err   error
	Run   string
	Paths int
	Why   string
}

func (e *KeptError) Error() string {
	return fmt.Sprintf("%v; %s", e.Err, e.Kept())
}

func (e *KeptError) Unwrap() error { return e.Err }

// Kept says what was kept and how to apply it, in one line.
func (e *KeptError) Kept() string {
	return fmt.Sprintf("%s changed by the run %s not applied (%s): skillhost changes apply %s",
		plural(e.Paths, "path", "paths"), pick(e.Paths == 1, "was", "were"), e.Why, e.Run)
}

// ErrNoStage is returned, wrapped, when a run with a write grant would
// write the host's files directly and the configuration says it may not.
var ErrNoStage = errors.New("cannot stage the run's writes")

// stageWrites gives a confined run with a write grant its stage, so that
// it changes a copy-on-write view and not the host's trees. It returns
// what is not enforced when the operator chose direct writes.
//
// A backend that stages gets a stage for every run, with or without a write
// grant: it also keeps there what a run wrote where it would be lost (its
// private /tmp).
func (h *Host) stageWrites(ctx context.Context, p *prepared) ([]string, error) {
	writes := len(p.request.Grant.FSWrite) > 0
	if !p.confines {
		return nil, nil
	}
	if h.Config.Sandbox.Writes == config.WritesDirect {
		if !writes {
			return nil, nil
		}
		return []string{"staged writes (sandbox.writes: direct): the run wrote the write grant's trees directly, and nothing judged what it left there"}, nil
	}
	info, err := p.exec.Info(ctx)
	if err != nil {
		return nil, err
	}
	if !writes && (!info.Enforces.StagedWrites || info.Remote) {
		return nil, nil
	}
	if !info.Enforces.StagedWrites && !info.Remote {
		return nil, shared.Refused(shared.ReasonUnsupported, fmt.Errorf("%w: strategy %s does not stage writes, and the run may write %s; skillhost applies a run's writes only after judging them (set sandbox.writes: direct to let this strategy's runs write those files directly, or run without the write grant)",
			ErrNoStage, p.strategy, strings.Join(p.request.Grant.FSWrite, ", ")))
	}
	store := h.ChangeStore()
	for _, w := range p.request.Grant.FSWrite {
		if shared.Under(store.Dir, w) {
			return nil, shared.Refused(shared.ReasonUnsupported, fmt.Errorf("%w: the stage %s lies inside the write grant %s (set XDG_STATE_HOME to a directory outside it)", ErrNoStage, store.Dir, w))
		}
	}
	stage, err := store.Create(p.request.RunID)
	if err != nil && !writes {
		// Without a write grant the stage only keeps what the run would
		// lose in its private /tmp: the run goes on without it.
		h.Warn("no stage for run %s (%v): files it leaves in its private /tmp are not kept", p.request.RunID, err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v (set XDG_STATE_HOME to a writable directory, or sandbox.writes: direct)", ErrNoStage, err)
	}
	p.request.Stage = stage
	p.started = time.Now()
	return nil, nil
}

// settle reads what a staged run changed and applies it, or keeps it when
// the run was interrupted (interrupted says how) or the review declined.
// Whatever is not applied stays in the store with its manifest.
func (h *Host) settle(ctx context.Context, p *prepared, interrupted string, review func(context.Context, string, []changeset.Change) bool) *ChangeReport {
	if p.request.Stage == "" {
		return nil
	}
	store := h.ChangeStore()
	run := p.request.RunID
	rep := newChangeReport(run)
	var all []changeset.Change
	for i, w := range p.request.Grant.FSWrite {
		cs, err := changeset.Scan(shared.StageUpper(p.request.Stage, i), w, i)
		all = append(all, cs...)
		if err != nil {
			interrupted = fmt.Sprintf("its changes could not be read: %v", err)
		}
	}
	discarded, err := changeset.ScanDiscarded(shared.StageDiscarded(p.request.Stage))
	if err != nil {
		h.Warn("run %s: what it wrote outside its grants could not be read: %v", run, err)
	}
	rep.Discarded = append(rep.Discarded, discarded...)
	if len(all)+len(discarded) == 0 {
		_ = store.Drop(run)
		return rep
	}
	if interrupted == "" && review != nil && !review(ctx, run, all) {
		interrupted = "the review declined them"
	}
	if interrupted == "" {
		changeset.Apply(all, h.changePolicy(p.skill), func(c changeset.Change) string { return store.Staged(run, c) }, run, p.started, nil)
	} else {
		rep.Interrupted = interrupted
		for i := range all {
			all[i].Outcome, all[i].Reason = changeset.Kept, "not applied: "+interrupted
		}
	}
	rep.sort(all)
	pending := append(changeset.Pending(all), discarded...)
	if len(pending) == 0 {
		_ = store.Drop(run)
		return rep
	}
	m := changeset.Manifest{Run: run, Skill: p.skill.Name, Tool: p.tool.Name, Started: p.started, Writes: p.request.Grant.FSWrite, Interrupted: interrupted, Changes: pending}
	if err := store.Save(m); err != nil {
		h.Warn("%v", err)
	}
	if len(rep.Refused)+len(rep.Kept)+len(rep.Discarded) > 0 {
		rep.Command = "skillhost changes apply " + run
	}
	return rep
}

// protectedViolations are the refused changes as violations of kind
// "protected".
func protectedViolations(rep *ChangeReport) []shared.Violation {
	if rep == nil {
		return nil
	}
	var out []shared.Violation
	for _, c := range rep.Refused {
		out = append(out, shared.Violation{Kind: "protected", Target: c.Path, Path: c.Path, Change: c.Kind, Reason: c.Reason,
			Detail: fmt.Sprintf("not applied; kept in the run's stage (skillhost changes apply %s %s applies it)", rep.Run, c.Path)})
	}
	return out
}

// ChangeNotes are the lines Text puts after the output about the run's
// changes (what was not applied, and how to apply it), for a caller that
// showed the output as it came.
func (r *RunReport) ChangeNotes() []string { return r.Changes.notes() }

// notes are the lines an agent reads after the output about the run's
// changes: what was not applied, and how to apply it.
func (rep *ChangeReport) notes() []string {
	if rep == nil {
		return nil
	}
	var out []string
	if n := len(rep.Kept); n > 0 {
		out = append(out, fmt.Sprintf("[skillhost: %s changed by the run %s not applied (%s): %s]", plural(n, "path", "paths"), pick(n == 1, "was", "were"), rep.Interrupted, rep.Command))
	}
	if n := len(rep.Refused); n > 0 {
		var why []string
		for _, c := range rep.Refused[:min(n, 3)] {
			why = append(why, fmt.Sprintf("%s %s (%s)", c.Rel(), c.Kind, c.Reason))
		}
		if n > 3 {
			why = append(why, fmt.Sprintf("and %d more", n-3))
		}
		out = append(out, fmt.Sprintf("[skillhost refused to apply %s: %s; kept: skillhost changes show %s]", plural(n, "change", "changes"), strings.Join(why, "; "), rep.Run))
	}
	if n := len(rep.Discarded); n > 0 {
		out = append(out, fmt.Sprintf("[skillhost: the run wrote %s outside its write grants, into its private /tmp, which is gone: %s; kept: skillhost changes apply %s PATH writes one; grant fs_write to its directory to write there]",
			plural(n, "file", "files"), changeset.Paths(rep.Discarded), rep.Run))
	}
	for _, c := range rep.Conflicts {
		if c.KeptAt != "" {
			out = append(out, fmt.Sprintf("[skillhost: %s changed on the host during the run; the run's version is at %s]", c.Path, c.KeptAt))
		} else {
			out = append(out, fmt.Sprintf("[skillhost: %s: %s]", c.Path, c.Reason))
		}
	}
	return out
}

// KeptChanges lists the runs whose changes were not all applied, oldest
// first.
func (h *Host) KeptChanges() ([]changeset.Manifest, error) {
	return h.ChangeStore().List()
}

// KeptRun returns the manifest of one run with kept changes.
func (h *Host) KeptRun(run string) (changeset.Manifest, error) {
	m, err := h.ChangeStore().Load(run)
	if err != nil {
		return m, &UsageError{err}
	}
	return m, nil
}

// ApplyKept applies a run's kept changes under the same policy as after a
// run, and keeps what it still cannot apply. paths, when given, are the
// only ones applied, and the user naming them lifts the protected names
// for them (not the rules on what is never applied: devices, set-uid,
// links out of the grant). A path changed on the host since the run
// started is a conflict, as after the run.
func (h *Host) ApplyKept(run string, paths []string) (*ChangeReport, error) {
	store := h.ChangeStore()
	m, err := store.Load(run)
	if err != nil {
		return nil, &UsageError{err}
	}
	var named []string
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(h.env.Cwd, p)
		}
		named = append(named, filepath.Clean(abs))
	}
	for _, n := range named {
		found := false
		for _, c := range m.Changes {
			if c.Path == n || shared.Under(c.Path, n) {
				found = true
			}
		}
		if !found {
			return nil, &UsageError{fmt.Errorf("run %s kept no change at %s (skillhost changes show %s lists them)", run, n, run)}
		}
	}
	var s *skill.Skill
	if found, err := h.Catalog.Find(m.Skill); err == nil {
		s = found
	} else {
		s = &skill.Skill{Name: m.Skill}
	}
	var pick []changeset.Change
	for _, c := range m.Changes {
		if !c.Discarded {
			pick = append(pick, c)
		}
	}
	if len(named) > 0 {
		pick = nil
		for _, c := range m.Changes {
			for _, n := range named {
				if c.Path == n || shared.Under(c.Path, n) {
					pick = append(pick, c)
					break
				}
			}
		}
	}
	for i := range pick {
		pick[i].Outcome = changeset.Kept
	}
	changeset.Apply(pick, h.changePolicy(s), func(c changeset.Change) string { return store.Staged(run, c) }, run, m.Started, named)
	rep := newChangeReport(run)
	rep.sort(pick)
	done := map[string]changeset.Change{}
	for _, c := range pick {
		done[c.Path+"\x00"+c.Kind] = c
	}
	var left []changeset.Change
	for _, c := range m.Changes {
		if d, ok := done[c.Path+"\x00"+c.Kind]; ok {
			c = d
		}
		if c.Outcome != changeset.Applied {
			left = append(left, c)
		}
	}
	if len(left) == 0 {
		return rep, store.Drop(run)
	}
	m.Changes = left
	rep.Command = "skillhost changes apply " + run
	return rep, store.Save(m)
}

// DropKept removes a run's kept changes without applying them.
func (h *Host) DropKept(run string) error {
	store := h.ChangeStore()
	if _, err := store.Load(run); err != nil {
		if entries, _ := os.ReadDir(filepath.Join(store.Dir, run)); entries == nil {
			return &UsageError{err}
		}
	}
	return store.Drop(run)
}

// StagedPath is where a kept change's content lies.
func (h *Host) StagedPath(run string, c changeset.Change) string {
	return h.ChangeStore().Staged(run, c)
}

// changesSummary lists a run's changes for a question to the user: kind,
// path and size, at most 20 lines.
func changesSummary(run string, cs []changeset.Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The run %s changed %s:", run, plural(len(cs), "path", "paths"))
	for i, c := range cs {
		if i == 20 {
			fmt.Fprintf(&b, "\n  and %d more (skillhost changes show %s)", len(cs)-20, run)
			break
		}
		fmt.Fprintf(&b, "\n  %s %s %s", c.Kind, c.Type, term.Printable(c.Path))
		if c.Type == changeset.TypeFile && c.Kind != changeset.Deleted {
			fmt.Fprintf(&b, " (%d bytes)", c.Size)
		}
	}
	return b.String()
}
