package confiner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
)

// stagingDirs are where the view's root is assembled before pivot_root, in
// the run's own mount namespace (nothing of it reaches the host's): the
// first that exists.
var stagingDirs = []string{"/tmp", "/mnt", "/run", "/var/tmp", "/dev"}

// buildView replaces the root of the calling process's (private) mount
// namespace with v: a fresh tmpfs holding only binds of what the run
// needs, a private size-limited /tmp, a minimal /dev, the PID namespace's
// own /proc, and nothing else; the old root is detached, so no path of the
// host outside the view can be named again, by the script or by anything
// it tricks. Every bind comes from a descriptor (the handles, opened
// without following symlinks), mounts onto a descriptor opened beneath the
// new root without following symlinks, and is made nosuid (and read-only
// unless writable): no path can be swapped between check and use.
func buildView(v *View, hs handles) error {
	// Nothing done here may propagate back to the host's mounts.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// Detached copies of everything shown, taken from the host's tree
	// before anything is mounted over it.
	trees, err := cloneBinds(v, hs)
	if err != nil {
		return err
	}
	defer func() {
		for _, t := range trees {
			if t.fd >= 0 {
				unix.Close(t.fd)
			}
		}
	}()
	root, staging, err := mountTmpfs("mode=0755,size=1m,nr_inodes=4096")
	if err != nil {
		return fmt.Errorf("view root: %w", err)
	}
	defer unix.Close(root)
	// /tmp first: a grant beneath it (a project in /tmp) is bound on top.
	if err := makeTmp(root, v.TmpSize); err != nil {
		return err
	}
	points := newDirMaker(root)
	defer points.close()
	for _, t := range trees {
		if err := t.attach(points); err != nil {
			return err
		}
	}
	if err := makeDev(root, v.Devices, hs); err != nil {
		return err
	}
	if err := makeProc(root); err != nil {
		return err
	}
	var bound []string
	for _, t := range trees {
		bound = append(bound, t.Path)
	}
	if v.Dir != "" && !shared.UnderAny(v.Dir, bound) {
		// A working directory no bind holds becomes an empty directory of
		// the view: the script starts there and finds nothing of the host.
		_, _ = points.dir(v.Dir)
	}
	// The root itself takes no new files: the script's scratch space is
	// /tmp.
	if err := unix.MountSetattr(root, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}); err != nil {
		return fmt.Errorf("view root read-only: %w", err)
	}
	return pivot(staging)
}

// treeBind is one detached mount waiting to be attached to the view.
type treeBind struct {
	Bind
	fd      int    // detached mount, or -1 for a symlink
	symlink string // target of a system symlink recreated in the view
	dir     bool
	nested  bool // beneath an earlier bind: its mount point exists there
}

// cloneBinds takes a detached copy of each bind's source, with its mount
// attributes set: read-only unless writable, always nosuid and nodev.
func cloneBinds(v *View, hs handles) ([]treeBind, error) {
	var out []treeBind
	var bound []string
	fail := func(err error) ([]treeBind, error) {
		for _, t := range out {
			if t.fd >= 0 {
				unix.Close(t.fd)
			}
		}
		return nil, err
	}
	for _, b := range v.Binds {
		t := treeBind{Bind: b, fd: -1}
		t.nested = shared.UnderAny(b.Path, bound)
		var src int
		var owned bool
		var err error
		if b.System {
			var st unix.Stat_t
			if err := unix.Lstat(b.Path, &st); err != nil {
				continue
			}
			if st.Mode&unix.S_IFMT == unix.S_IFLNK && !t.nested && !strings.HasPrefix(b.Path, "/etc/") {
				// /bin -> usr/bin on a merged-/usr system.
				if t.symlink, err = os.Readlink(b.Path); err != nil {
					return fail(fmt.Errorf("read link %s: %w", b.Path, err))
				}
				out = append(out, t)
				continue
			}
			// A system file (root's, not the run's) reached through a link
			// (/etc/localtime) is bound where the link was.
			src, err = unix.Open(b.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
			owned = true
		} else {
			src, owned, err = hs.fd(b.Path)
		}
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("open %s: %w", b.Path, err))
		}
		var st unix.Stat_t
		if err := unix.Fstat(src, &st); err != nil {
			if owned {
				unix.Close(src)
			}
			return fail(fmt.Errorf("stat %s: %w", b.Path, err))
		}
		t.dir = st.Mode&unix.S_IFMT == unix.S_IFDIR
		if b.Upper != "" {
			t.fd, err = overlayOf(src, b)
			if owned {
				unix.Close(src)
			}
			if err != nil {
				return fail(fmt.Errorf("stage the writes to %s: %w", b.Path, err))
			}
			out = append(out, t)
			bound = append(bound, b.Path)
			continue
		}
		if !t.dir && st.Mode&unix.S_IFMT != unix.S_IFREG {
			// Only directories and regular files are shown: a FIFO or a
			// device in a grant would be a way to block or reach the host.
			if owned {
				unix.Close(src)
			}
			continue
		}
		t.fd, err = unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if owned {
			unix.Close(src)
		}
		if err != nil {
			return fail(fmt.Errorf("copy mount of %s: %w", b.Path, err))
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
		if !b.Write {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(t.fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			unix.Close(t.fd)
			return fail(fmt.Errorf("mount attributes of %s: %w", b.Path, err))
		}
		out = append(out, t)
		bound = append(bound, b.Path)
	}
	return out, nil
}

// overlayOf makes a detached overlay whose lower layer is the directory
// lower (an O_PATH descriptor of the real tree, which the overlay never
// writes) and whose upper and work directories are b's stage: what the run
// changes lands there, in overlayfs's own format (whiteouts, opaque
// directories), which is what the host reads afterwards. user.* xattrs
// (userxattr) keep that format one and the same as root and in a user
// namespace. Every layer is named through a descriptor opened without
// following symlinks, so no path can be swapped before the mount.
func overlayOf(lower int, b Bind) (int, error) {
	var st unix.Stat_t
	if err := unix.Fstat(lower, &st); err != nil {
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return -1, errors.New("staged writes need a directory")
	}
	upper, err := openNoSymlinks(b.Upper)
	if err != nil {
		return -1, fmt.Errorf("stage %s: %w", b.Upper, err)
	}
	defer unix.Close(upper)
	work, err := openNoSymlinks(b.Work)
	if err != nil {
		return -1, fmt.Errorf("stage %s: %w", b.Work, err)
	}
	defer unix.Close(work)
	fsfd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("overlayfs: %w", err)
	}
	defer unix.Close(fsfd)
	fdPath := func(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
	for _, kv := range [][2]string{{"lowerdir", fdPath(lower)}, {"upperdir", fdPath(upper)}, {"workdir", fdPath(work)}} {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return -1, fmt.Errorf("overlayfs %s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigSetFlag(fsfd, "userxattr"); err != nil {
		return -1, fmt.Errorf("overlayfs userxattr: %w", err)
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, fmt.Errorf("overlayfs: %w", err)
	}
	return unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
}

// attach mounts t in the view; points makes its mount point.
func (t treeBind) attach(points *dirMaker) error {
	if t.symlink != "" {
		parent, err := points.dir(filepath.Dir(t.Path))
		if err != nil {
			return fmt.Errorf("view %s: %w", t.Path, err)
		}
		if err := unix.Symlinkat(t.symlink, parent, filepath.Base(t.Path)); err != nil {
			return fmt.Errorf("view %s: %w", t.Path, err)
		}
		return nil
	}
	var target int
	var err error
	owned := true // the descriptor is this call's to close
	switch {
	case t.nested:
		// The mount point is in an earlier bind, the same tree as the
		// host's: it exists, and nothing may be created there.
		target, err = openBeneath(points.root, t.Path)
	case t.dir:
		// points keeps the descriptor, and drops it once the mount
		// covers what it names.
		target, err = points.dir(t.Path)
		owned = false
		defer points.mounted(t.Path)
	default:
		target, err = points.file(t.Path)
	}
	if err != nil {
		return fmt.Errorf("mount point %s: %w", t.Path, err)
	}
	if owned {
		defer unix.Close(target)
	}
	if err := unix.MoveMount(t.fd, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("bind %s: %w", t.Path, err)
	}
	return nil
}

// openBeneath opens path beneath root without following any symlink.
func openBeneath(root int, path string) (int, error) {
	rel := strings.TrimLeft(path, "/")
	if rel == "" {
		rel = "."
	}
	return unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// mountTmpfs makes a tmpfs with options and attaches it at the first of
// stagingDirs, returning an O_PATH descriptor of its root and its path.
func mountTmpfs(options string) (int, string, error) {
	for _, dir := range stagingDirs {
		if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, options); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				continue
			}
			return -1, "", err
		}
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		return fd, dir, err
	}
	return -1, "", errors.New("no directory to assemble it on")
}

// newTmpfs makes a detached tmpfs with the given options.
func newTmpfs(options map[string]string) (int, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, err
	}
	defer unix.Close(fsfd)
	for k, v := range options {
		if err := unix.FsconfigSetString(fsfd, k, v); err != nil {
			return -1, fmt.Errorf("tmpfs %s=%s: %w", k, v, err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, err
	}
	return unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
}

// attachNew mounts the detached mount m at name (made a directory) beneath
// root.
func attachNew(root, m int, path string) error {
	target, err := mkdirBeneath(root, path)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	return unix.MoveMount(m, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// makeTmp gives the view its private /tmp: a tmpfs of size bytes, sticky
// and world-writable like the host's.
func makeTmp(root int, size int64) error {
	m, err := newTmpfs(map[string]string{"mode": "1777", "size": strconv.FormatInt(size, 10), "nr_inodes": "262144"})
	if err != nil {
		return fmt.Errorf("private %s: %w", ViewTmp, err)
	}
	defer unix.Close(m)
	if err := attachNew(root, m, ViewTmp); err != nil {
		return fmt.Errorf("private %s: %w", ViewTmp, err)
	}
	return nil
}

// makeDev gives the view a /dev of its own: the named device nodes bound
// from the host's, the usual links to /proc/self/fd, and /dev/shm as a
// link into the private /tmp.
func makeDev(root int, devices []string, hs handles) error {
	m, err := newTmpfs(map[string]string{"mode": "0755", "size": "64k", "nr_inodes": "64"})
	if err != nil {
		return fmt.Errorf("view /dev: %w", err)
	}
	defer unix.Close(m)
	// Device nodes must work, so this tmpfs is not nodev; it is read-only
	// once filled, so no node can be made in it.
	if err := unix.MountSetattr(m, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_NODEV}); err != nil {
		return fmt.Errorf("view /dev: %w", err)
	}
	if err := attachNew(root, m, "/dev"); err != nil {
		return fmt.Errorf("view /dev: %w", err)
	}
	dev, err := openBeneath(root, "/dev")
	if err != nil {
		return err
	}
	defer unix.Close(dev)
	points := newDirMaker(root)
	defer points.close()
	for _, d := range devices {
		src, owned, err := hs.fd(d)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(src, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			if owned {
				unix.Close(src)
			}
			continue
		}
		tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
		if owned {
			unix.Close(src)
		}
		if err != nil {
			return fmt.Errorf("copy mount of %s: %w", d, err)
		}
		err = func() error {
			defer unix.Close(tree)
			target, err := points.file(d)
			if err != nil {
				return err
			}
			defer unix.Close(target)
			return unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		}()
		if err != nil {
			return fmt.Errorf("bind %s: %w", d, err)
		}
	}
	for name, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
		"shm": ViewTmp,
	} {
		if err := unix.Symlinkat(target, dev, name); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("view /dev/%s: %w", name, err)
		}
	}
	return unix.MountSetattr(dev, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID})
}

// makeProc mounts the PID namespace's own procfs at /proc, with /proc/sys
// and /proc/sysrq-trigger read-only. Where the kernel refuses a new procfs
// (a container that masks parts of the host's), the view has an empty
// /proc: the host's is never shown.
func makeProc(root int) error {
	fsfd, err := unix.Fsopen("proc", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return emptyProc(root)
	}
	defer unix.Close(fsfd)
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return emptyProc(root)
	}
	m, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return emptyProc(root)
	}
	defer unix.Close(m)
	if err := attachNew(root, m, "/proc"); err != nil {
		return fmt.Errorf("view /proc: %w", err)
	}
	for _, sub := range []string{"sys", "sysrq-trigger"} {
		fd, err := openBeneath(root, "/proc/"+sub)
		if err != nil {
			continue
		}
		tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if err == nil {
			err = unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
			if err == nil {
				err = unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
			}
			unix.Close(tree)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("view /proc/%s read-only: %w", sub, err)
		}
	}
	return nil
}

func emptyProc(root int) error {
	fd, err := mkdirBeneath(root, "/proc")
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// pivot makes staging the root of the mount namespace and detaches the
// old root, then moves to the new root.
func pivot(staging string) error {
	if err := unix.Chdir(staging); err != nil {
		return fmt.Errorf("enter view: %w", err)
	}
	// pivot_root(".", ".") stacks the old root over the new one; detaching
	// "." then removes the old root, leaving the view.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	return unix.Chdir("/")
}
