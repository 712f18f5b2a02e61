package grant

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// Workspace modes: how much of the host's working directory a skill gets.
const (
	WorkspaceNone      = "none"
	WorkspaceRead      = "read"
	WorkspaceReadWrite = "read-write"
)

// ParseWorkspace reads a workspace mode: none (or empty), read, or
// read-write (also rw, write).
func ParseWorkspace(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", WorkspaceNone, "off", "false", "no":
		return WorkspaceNone, nil
	case WorkspaceRead, "ro", "read-only":
		return WorkspaceRead, nil
	case WorkspaceReadWrite, "rw", "write", "readwrite", "read_write":
		return WorkspaceReadWrite, nil
	}
	return "", fmt.Errorf("%q is not none, read or read-write", s)
}

// Operator is what the person running skillhost grants a skill on top of
// what it declares (the configuration's skills.grants.NAME, and a run's
// --workspace). Paths, network and timeout are clamped by the ceiling like
// a declaration; the workspace is not, because it names exactly the
// directory the operator is working in and is an explicit opt-in, the way a
// coding agent is granted its workspace.
type Operator struct {
	FSRead  []string
	FSWrite []string
	// Network, when set, replaces what the skill declares; Hosts, when
	// not nil, replace the skill's host list (and turn Network on).
	Network *bool
	Hosts   []string
	// Timeout, when positive, replaces what the skill declares.
	Timeout time.Duration
	// Workspace is WorkspaceNone, WorkspaceRead or WorkspaceReadWrite.
	Workspace string
}

// Origins say where each part of a grant came from: "skill" (its
// SKILL.md), "operator" (the configuration), "workspace" (the working
// directory grant) or "ceiling" (a timeout cut to the ceiling's). A path
// granted by several has them all, in that order.
type Origins struct {
	FSRead  map[string][]string `json:"fs_read"`
	FSWrite map[string][]string `json:"fs_write"`
	Network string              `json:"network"`
	// Hosts are the allowed host patterns of a grant by name: "skill" or
	// "operator" when the pattern is as declared, "ceiling" when the
	// ceiling narrowed it to this, both when they wrote the same.
	Hosts   map[string][]string `json:"hosts,omitempty"`
	Timeout string              `json:"timeout"`
}

// Origin names.
const (
	FromSkill     = "skill"
	FromOperator  = "operator"
	FromWorkspace = "workspace"
	FromCeiling   = "ceiling"
	FromDefault   = "default"
)

// ComputeWith is Compute with the operator's grant added: the union of
// what the skill declares and what the operator grants, each clamped to
// the ceiling, plus the workspace. It also says where each part came from.
// It never fails: what it drops or downgrades is a warning.
func ComputeWith(name string, d Declared, op Operator, c Ceiling, env Env) Computed {
	merged := d
	netFrom := FromSkill
	if op.Network != nil {
		merged.Network = *op.Network
		netFrom = FromOperator
	}
	if op.Hosts != nil {
		merged.Network, merged.Hosts, netFrom = true, op.Hosts, FromOperator
	}
	if op.Timeout > 0 {
		merged.Timeout = op.Timeout
	}
	merged.FSRead, merged.FSWrite = nil, nil
	r := compute(name, merged, c, env, netFrom)
	g, o, rc := &r.Grant, &r.Origins, r.roots
	o.FSRead, o.FSWrite = map[string][]string{}, map[string][]string{}

	add := func(field string, list *[]string, origins map[string][]string, paths, roots, ceiling []string, from, prefix string) {
		kept, w := clampTo(field, paths, roots, ceiling, env)
		for _, msg := range w {
			r.warn(prefix + msg)
		}
		for _, p := range kept {
			if !slices.Contains(*list, p) {
				*list = append(*list, p)
			}
			if !slices.Contains(origins[p], from) {
				origins[p] = append(origins[p], from)
			}
		}
	}
	opPrefix := fmt.Sprintf("skills.grants.%s: ", name)
	add("fs_read", &g.FSRead, o.FSRead, d.FSRead, rc.read, c.FSRead, FromSkill, "")
	add("fs_read", &g.FSRead, o.FSRead, op.FSRead, rc.read, c.FSRead, FromOperator, opPrefix)
	add("fs_write", &g.FSWrite, o.FSWrite, d.FSWrite, rc.write, c.FSWrite, FromSkill, "")
	add("fs_write", &g.FSWrite, o.FSWrite, op.FSWrite, rc.write, c.FSWrite, FromOperator, opPrefix)
	if op.Workspace == WorkspaceRead || op.Workspace == WorkspaceReadWrite {
		ws, err := Resolve(env.Cwd, env)
		home, _ := Resolve(env.Home, env)
		switch {
		case err != nil:
			r.warn(fmt.Sprintf("workspace: %v; not granted", err))
		case ws == "/" || home != "" && shared.Under(home, ws):
			// A workspace is a project directory. Granting / or the home
			// directory (or above it) would hand over ~/.ssh and the
			// shell's start-up files.
			r.warn(fmt.Sprintf("workspace: the working directory %s is / or holds the home directory; not granted (run from a project directory)", ws))
		default:
			root := []string{ws}
			add("fs_read", &g.FSRead, o.FSRead, root, root, root, FromWorkspace, "")
			if op.Workspace == WorkspaceReadWrite {
				add("fs_write", &g.FSWrite, o.FSWrite, root, root, root, FromWorkspace, "")
			}
		}
	}

	switch {
	case !g.Network && op.Network != nil && !*op.Network:
		o.Network = FromOperator // withdrawn
	case !g.Network && (op.Network != nil || op.Hosts != nil || d.Network):
		o.Network = FromCeiling // asked for, refused by the ceiling
	case !g.Network:
		o.Network = FromDefault
	case op.Network != nil || op.Hosts != nil:
		o.Network = FromOperator
	default:
		o.Network = FromSkill
	}
	switch {
	case c.Timeout > 0 && g.Timeout == c.Timeout && merged.Timeout != c.Timeout:
		o.Timeout = FromCeiling
	case op.Timeout > 0:
		o.Timeout = FromOperator
	case d.Timeout > 0 && d.Timeout != DefaultTimeout:
		o.Timeout = FromSkill
	default:
		o.Timeout = FromDefault
	}
	return r.Computed
}
