//go:build linux

// Command skillhost-sandbox-bwrap is a sandbox plugin that confines each
// command with bubblewrap (bwrap): new user, PID, IPC, network, UTS and
// cgroup namespaces, a root of its own in which only the system's
// programs and libraries, a few files of /etc and the run's grant are
// mounted, the grant's writable trees alone writable (less their protected
// paths, bound read-only over them), and a private /tmp. A seccomp filter
// (seccomp_linux.go, handed to bwrap's --seccomp) refuses what the mounts
// leave open: set-uid and set-gid bits, new namespaces, leases.
// It is an example of a namespace backend on the SDK: bwrap takes a
// descriptor (the plugin's own binary, bound in as the run's init), the
// init reports the command's real status on a status channel (bwrap
// reports a signal death as exit 128+N), and the deadline's SIGTERM
// spares bwrap, which would die of it and take the command with it.
//
// bubblewrap 0.8 cannot mount an overlay, so the plugin does not stage a
// run's writes: a skill that writes runs with sandbox.writes: direct.
//
// Build it under its plugin name and put it where skillhost looks:
//
//	go build -o bin/skillhost-sandbox-bwrap ./examples/plugin-bwrap
//	bin/skillhost run --strategy bwrap csv-summary summarize -- data.csv
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend"
	"github.com/skillhost/skillhost/shared/runner"
)

// initPath is where the plugin's binary appears inside the sandbox, to run
// as the command's status init.
const initPath = "/run/skillhost-bwrap/init"

type bwrap struct{}

// Info claims what the namespaces and the mounts enforce. Resource limits
// are applied where the runner can (Spec.Limits) and reported otherwise,
// but not claimed: rlimits do not bound shared memory, and root is not
// bound by RLIMIT_NPROC.
func (bwrap) Info(context.Context) (shared.Info, error) {
	return shared.Info{
		Name:             "bwrap",
		Version:          "0.1.0",
		ContractVersions: []int{shared.ContractVersion},
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		Enforces: shared.Enforcement{
			FSRead: true, FSWrite: true, Network: true, Timeout: true, ProcessIsolation: true,
		},
		// --unshare-all, with --share-net for a grant of the network (this
		// backend claims no Egress, so a grant by name never reaches it).
		// The user namespace is left undeclared: bwrap only tries for one.
		Isolation: shared.Isolation{Network: shared.PrivateUnlessNetwork, IPC: shared.Private, PID: shared.Private, Mount: shared.Private},
	}, nil
}

// Probe runs bwrap once with every namespace it will ask for.
func (bwrap) Probe(ctx context.Context) (shared.Probe, error) {
	path, err := bwrapPath()
	if err != nil {
		return shared.Probe{Status: shared.Unsupported, Reason: err.Error()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true").CombinedOutput()
	if err != nil {
		return shared.Probe{Status: shared.Unhealthy, Reason: fmt.Sprintf("bwrap cannot create its namespaces here: %v: %s", err, strings.TrimSpace(string(out)))}, nil
	}
	return shared.Probe{Status: shared.Healthy, Reason: "bubblewrap at " + path}, nil
}

// Execute runs the command in a bwrap sandbox built from the request.
func (bwrap) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	if req.Grant.ByName() {
		return shared.Result{}, shared.Refused(shared.ReasonEgress, errors.New("the bwrap plugin cannot limit the network to named hosts; grant the whole network or pick the landlock strategy"))
	}
	path, err := bwrapPath()
	if err != nil {
		return shared.Result{}, shared.Refused(shared.ReasonUnsupported, err)
	}
	// bwrap binds existing paths only: a write grant that does not exist
	// yet is created, as the script would have.
	for _, p := range req.Grant.FSWrite {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			if err := mkdirNoFollow(p); err != nil {
				return shared.Result{}, fmt.Errorf("create fs_write directory %s: %w; refusing to run", p, err)
			}
		}
	}
	self, err := os.Executable()
	if err != nil {
		return shared.Result{}, fmt.Errorf("find the plugin's binary: %w", err)
	}
	m, err := sandboxMounts(ctx, req, self)
	if err != nil {
		return shared.Result{}, err
	}
	defer m.close()

	spec := backend.SpecFor(req)
	spec.Env = backend.WithEnv(req.Env, "TMPDIR", "/tmp")
	spec.ExtraFiles = m.files // the binary and the grant's paths, by descriptor
	spec.StatusChannel = true
	// bwrap, bwrap as the PID namespace's init, and the status init.
	spec.TermBelow = 3
	var cannot []string
	spec.Limits, cannot = runner.SplitLimits(req.Limits)
	args := append([]string{path}, m.args...)
	// The init changes to the request's directory inside the sandbox and
	// gives the command exactly the request's environment: bwrap sets PWD.
	spec.Dir = ""
	init := runner.StatusInit{Path: initPath, FD: runner.StatusFD(spec), Dir: req.Dir}
	if !hasEnv(req.Env, "PWD") {
		init.Unset = []string{"PWD"}
	}
	spec.Argv = append(args, init.Argv(req.Argv)...)

	backend.LoggerFrom(ctx).Debug("run", "id", req.RunID, "argv", spec.Argv)
	res, err := backend.Run(ctx, spec, emit)
	if err != nil {
		return shared.Result{}, err
	}
	for _, c := range cannot {
		res.NotEnforced = append(res.NotEnforced, "resource limit "+c)
	}
	return res, nil
}

// mkdirNoFollow creates the directory path and its missing parents, one
// component at a time beneath the one before, never following a symbolic
// link: a link swapped into a parent cannot send the directory elsewhere.
func mkdirNoFollow(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s is not an absolute path", path)
	}
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	for _, name := range strings.Split(strings.Trim(filepath.Clean(path), "/"), "/") {
		if err := unix.Mkdirat(dir, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(dir)
			return err
		}
		next, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return fmt.Errorf("%s: %w (a symbolic link, or not a directory)", name, err)
		}
		dir = next
	}
	return unix.Close(dir)
}

func hasEnv(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// bwrapPath finds bwrap on PATH or where distributions install it.
func bwrapPath() (string, error) {
	if p, err := exec.LookPath("bwrap"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/bwrap"); err == nil {
		return "/usr/bin/bwrap", nil
	}
	return "", errors.New("bubblewrap (bwrap) is not installed; install the bubblewrap package")
}

// systemDirs are mounted read-only (or recreated as the symbolic links
// they are on a merged /usr).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the files of /etc programs need; the rest of /etc (keys,
// shadow, the machine's configuration) stays out.
var etcFiles = []string{
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts",
	"/etc/resolv.conf", "/etc/ssl/certs", "/etc/ca-certificates", "/etc/mime.types",
	"/etc/os-release", "/etc/python3", "/etc/perl",
}

// mounts are bwrap's options and the descriptors they name (the i-th
// file is descriptor 3+i in bwrap).
type mounts struct {
	args  []string
	files []*os.File
}

// pass hands f to bwrap and returns its descriptor number there.
func (m *mounts) pass(f *os.File) string {
	m.files = append(m.files, f)
	return strconv.Itoa(2 + len(m.files))
}

// bindFD mounts f at dest with opt (--ro-bind-fd or --bind-fd).
func (m *mounts) bindFD(opt string, f *os.File, dest string) {
	m.args = append(m.args, opt, m.pass(f), dest)
}

// protect binds each protected path of a write grant read-only over the
// writable bind that holds it (bwrap mounts in order, so it comes after),
// opened without following a link as the grant's paths are. A protected
// path that does not exist cannot be bound: the run may create it, and the
// host, which checks those paths after a run with direct writes, reports
// what appeared (as with the Landlock plugin). One that exists but cannot
// be opened so refuses the run: it would otherwise stay writable.
func (m *mounts) protect(g shared.Grant) error {
	for _, p := range g.Protected {
		if !shared.UnderAny(p, g.FSWrite) {
			continue // read-only, or out of sight, already
		}
		f, err := openNoFollow(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("protect %s inside the write grant: %w; refusing to run", p, err)
		}
		m.bindFD("--ro-bind-fd", f, filepath.Clean(p))
	}
	return nil
}

func (m *mounts) close() {
	for _, f := range m.files {
		f.Close()
	}
}

// sandboxMounts are bwrap's options for req. The plugin's binary (self)
// and every path of the grant are opened here, refusing a symbolic link
// anywhere along them, and bound by descriptor: a path swapped for a link
// after the check still mounts what was checked.
func sandboxMounts(ctx context.Context, req shared.Request, self string) (*mounts, error) {
	m := &mounts{args: []string{"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"}}
	if req.Grant.Network {
		m.args = append(m.args, "--share-net")
	}
	for _, d := range systemDirs {
		if target, err := os.Readlink(d); err == nil {
			m.args = append(m.args, "--symlink", target, d)
		} else {
			m.args = append(m.args, "--ro-bind-try", d, d)
		}
	}
	for _, f := range etcFiles {
		m.args = append(m.args, "--ro-bind-try", f, f)
	}
	m.args = append(m.args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	exe, err := os.Open(self)
	if err != nil {
		return nil, fmt.Errorf("open the plugin's binary: %w", err)
	}
	m.bindFD("--ro-bind-fd", exe, initPath)
	read := append(append(append([]string{}, req.ExecPaths...), req.Grant.FSRead...), req.SkillDir)
	for i, p := range append(read, req.Grant.FSWrite...) {
		opt := "--ro-bind-fd"
		if i >= len(read) {
			opt = "--bind-fd"
		}
		f, err := openNoFollow(p)
		if errors.Is(err, os.ErrNotExist) && opt == "--ro-bind-fd" {
			continue // nothing to read there
		}
		if err != nil {
			// Left out, not followed: the run sees nothing there.
			backend.LoggerFrom(ctx).Warn("grant path left out", "path", p, "error", err)
			continue
		}
		m.bindFD(opt, f, filepath.Clean(p))
	}
	if err := m.protect(req.Grant); err != nil {
		m.close()
		return nil, err
	}
	filter, err := seccompFile()
	if err != nil {
		m.close()
		return nil, err
	}
	m.args = append(m.args, "--seccomp", m.pass(filter))
	// The working directory need not be granted: outside the grant it is
	// an empty directory of the sandbox, so the command starts there and
	// sees nothing of the host's (as the Landlock plugin's view does).
	bound := append(append(append([]string{}, read...), req.Grant.FSWrite...), systemDirs...)
	if req.Dir != "" && !shared.UnderAny(req.Dir, bound) {
		m.args = append(m.args, "--dir", filepath.Clean(req.Dir))
	}
	m.args = append(m.args, "--")
	return m, nil
}

// openNoFollow opens the absolute path with O_PATH, one component at a
// time beneath the one before, never following a symbolic link.
func openNoFollow(path string) (*os.File, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s is not an absolute path", path)
	}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	names := strings.Split(strings.Trim(filepath.Clean(path), "/"), "/")
	for i, name := range names {
		if name == "" {
			break
		}
		flags := unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i < len(names)-1 {
			flags |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, name, flags, 0)
		unix.Close(fd)
		if errors.Is(err, unix.ENOENT) {
			return nil, os.ErrNotExist
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w (a symbolic link along the path?)", path, err)
		}
		fd = next
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		return nil, fmt.Errorf("%s is a symbolic link", path)
	}
	return os.NewFile(uintptr(fd), path), nil
}

func main() { backend.Serve(bwrap{}) }
