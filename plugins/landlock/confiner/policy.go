package confiner

import (
	"errors"
	"slices"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/frame"
)

// ViewTmp is the run's private temporary directory inside the view: a
// tmpfs of the run's own, gone with its mount namespace.
const ViewTmp = "/tmp"

// Policy is everything one confined run may touch. The plugin computes it
// (package landlock's Build, a deterministic function of the request and
// the machine's file tree) and it travels, encoded, to the supervisor or
// confine helper that enforces it.
type Policy struct {
	// ABI is the Landlock ABI to use; 0 means Landlock is not applied.
	ABI int `json:"abi"`
	// Read-only (and executable) directories and files.
	RODirs  []string `json:"ro_dirs"`
	ROFiles []string `json:"ro_files"`
	// Read-write directories and files.
	RWDirs  []string `json:"rw_dirs"`
	RWFiles []string `json:"rw_files"`
	// Network allows every socket; otherwise TCP is denied by Landlock and
	// socket creation by seccomp.
	Network bool `json:"network"`
	// Egress, when set (Network is then false), routes the run to its
	// egress proxy: the run's network namespace has only loopback, where
	// the confine helper listens on Port and relays each connection to the
	// proxy at Target, outside; Landlock lets the script connect to Port
	// alone. Execute fills it once the run's proxy listens.
	Egress *Route `json:"egress,omitempty"`
	// Limits bound resources; zero fields are unlimited.
	Limits Limits `json:"limits"`
	// NprocBase is the number of processes the script's user already runs;
	// RLIMIT_NPROC is set to NprocBase+Limits.Processes. Zero: not set.
	NprocBase int64 `json:"nproc_base,omitempty"`
	// Cgroups enforces the process and memory limits with cgroups (for
	// root, where RLIMIT_NPROC does not apply), besides the rlimits.
	Cgroups bool `json:"cgroups,omitempty"`
	// DropCaps removes every capability from a root script.
	DropCaps bool `json:"drop_caps"`
	// Seccomp is the assembled seccomp program, built by the plugin (once
	// per kind) so the helper only loads it. SeccompNoMounts is the one
	// for a helper without a private mount namespace: with no read-only
	// view to confine them, it refuses metadata changes (chmod, chown,
	// utimes, extended attributes) everywhere.
	Seccomp         Filter `json:"seccomp,omitempty"`
	SeccompNoMounts Filter `json:"seccomp_no_mounts,omitempty"`
	// View is the run's filesystem, built in its mount namespace before
	// Landlock: nothing outside it exists for the script. Nil means no
	// view (Landlock-only mode, where the kernel refuses namespaces).
	View *View `json:"view,omitempty"`
	// Canonical lists the request's paths (skill, grant, interpreters),
	// which the host resolved through every symlink: each must still
	// resolve to itself when the helper applies the policy, or something
	// swapped a directory for a symlink since.
	Canonical []string `json:"canonical,omitempty"`
}

// Route is where a run's egress goes: the port the script connects to on
// its own loopback, and the proxy's address in the plugin's namespace.
type Route struct {
	Port   int    `json:"port"`
	Target string `json:"target"`
}

// View is a run's filesystem: a fresh tmpfs root holding only binds of
// what the run needs, in the way bubblewrap builds one.
type View struct {
	// Binds are mounted in order (a parent before what lies beneath it),
	// each over its own path: read-only unless Write, and Protect marks a
	// read-only bind inside a writable one.
	Binds []Bind `json:"binds"`
	// Devices are device nodes bound into a minimal /dev.
	Devices []string `json:"devices"`
	// TmpSize bounds the private /tmp, in bytes.
	TmpSize int64 `json:"tmp_size"`
	// Dir is the working directory, made an empty directory of the view
	// when no bind holds it.
	Dir string `json:"dir,omitempty"`
}

// Bind is one path of the host shown in a view.
type Bind struct {
	Path    string `json:"path"`
	Write   bool   `json:"write,omitempty"`
	Protect bool   `json:"protect,omitempty"`
	// System marks a path of the system (not the request's): a symlink
	// there is recreated in the view, and a file reached through one is
	// bound where the link was.
	System bool `json:"system,omitempty"`
	// Upper and Work, set on a writable bind of a staged run, make it an
	// overlay of the real directory (read-only beneath) whose changes go
	// to Upper: the host's tree does not change during the run.
	Upper string `json:"upper,omitempty"`
	Work  string `json:"work,omitempty"`
}

// policyVersion opens an encoded policy: the plugin and its supervisor
// binary are separate files that could come from different builds.
// Version 2: a view's bind count is a count (frame.AppendCount), not an int.
const policyVersion byte = 2

// Encode is the policy as the supervisor or confine helper receives it: a
// record of package frame, which keeps paths that are not UTF-8 byte for
// byte (JSON would not) and costs a lean supervisor binary far less to read
// than gob.
func (p Policy) Encode() ([]byte, error) {
	b := []byte{policyVersion}
	b = frame.AppendInt(b, int64(p.ABI))
	for _, l := range [][]string{p.RODirs, p.ROFiles, p.RWDirs, p.RWFiles, p.Canonical} {
		b = frame.AppendStrings(b, l)
	}
	b = frame.AppendBool(b, p.Network)
	b = frame.AppendBool(b, p.Egress != nil)
	if p.Egress != nil {
		b = frame.AppendString(frame.AppendInt(b, int64(p.Egress.Port)), p.Egress.Target)
	}
	for _, v := range []int64{p.Limits.OpenFiles, p.Limits.FileSize, p.Limits.Processes, p.Limits.Memory, p.NprocBase} {
		b = frame.AppendInt(b, v)
	}
	b = frame.AppendBool(frame.AppendBool(b, p.Cgroups), p.DropCaps)
	b = appendFilter(appendFilter(b, p.Seccomp), p.SeccompNoMounts)
	b = frame.AppendBool(b, p.View != nil)
	if v := p.View; v != nil {
		b = frame.AppendCount(b, len(v.Binds))
		for _, bd := range v.Binds {
			b = frame.AppendString(b, bd.Path)
			b = frame.AppendBool(frame.AppendBool(frame.AppendBool(b, bd.Write), bd.Protect), bd.System)
			b = frame.AppendString(frame.AppendString(b, bd.Upper), bd.Work)
		}
		b = frame.AppendStrings(b, v.Devices)
		b = frame.AppendString(frame.AppendInt(b, v.TmpSize), v.Dir)
	}
	return b, nil
}

// DecodePolicy reverses Encode.
func DecodePolicy(data []byte) (Policy, error) {
	if len(data) == 0 || data[0] != policyVersion {
		return Policy{}, errors.New("a policy of another version: the plugin and its supervisor binary come from different builds; install them together")
	}
	d := frame.NewDecoder(data[1:])
	p := Policy{ABI: int(d.ReadInt())}
	for _, l := range []*[]string{&p.RODirs, &p.ROFiles, &p.RWDirs, &p.RWFiles, &p.Canonical} {
		*l = d.ReadStrings()
	}
	p.Network = d.ReadBool()
	if d.ReadBool() {
		p.Egress = &Route{Port: int(d.ReadInt()), Target: d.ReadString()}
	}
	for _, v := range []*int64{&p.Limits.OpenFiles, &p.Limits.FileSize, &p.Limits.Processes, &p.Limits.Memory, &p.NprocBase} {
		*v = d.ReadInt()
	}
	p.Cgroups, p.DropCaps = d.ReadBool(), d.ReadBool()
	var err error
	if p.Seccomp, err = readFilter(d); err != nil {
		return Policy{}, err
	}
	if p.SeccompNoMounts, err = readFilter(d); err != nil {
		return Policy{}, err
	}
	if d.ReadBool() {
		p.View = readView(d)
	}
	if err := d.Finish(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

func readView(d *frame.Decoder) *View {
	v := &View{}
	n := d.ReadCount()
	for i := 0; i < n && d.Err() == nil; i++ {
		bd := Bind{Path: d.ReadString()}
		bd.Write, bd.Protect, bd.System = d.ReadBool(), d.ReadBool(), d.ReadBool()
		bd.Upper, bd.Work = d.ReadString(), d.ReadString()
		v.Binds = append(v.Binds, bd)
	}
	v.Devices = d.ReadStrings()
	v.TmpSize, v.Dir = d.ReadInt(), d.ReadString()
	return v
}

// Limits are the request's resource limits.
type Limits = shared.Limits

// Readable reports whether path is inside something the policy lets
// scripts read.
func (p Policy) Readable(path string) bool {
	return shared.UnderAny(path, p.RODirs) || shared.UnderAny(path, p.RWDirs) || slices.Contains(p.ROFiles, path) || slices.Contains(p.RWFiles, path)
}

// Writable reports whether path is inside something the policy lets
// scripts write.
func (p Policy) Writable(path string) bool {
	if p.View != nil {
		for _, b := range p.View.Binds {
			if b.Protect && shared.Under(path, b.Path) {
				return false
			}
		}
	}
	return shared.UnderAny(path, p.RWDirs) || slices.Contains(p.RWFiles, path)
}
