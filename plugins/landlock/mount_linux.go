package landlock

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// isolateMounts gives the helper's private mount namespace a read-only,
// nosuid view of everything except the writable part of the policy, which
// is bind-mounted (nosuid) over itself from the helper's own handles.
// Landlock has no right for chmod, chown, utimes or extended attributes;
// a read-only mount refuses them all (EROFS), outside the grant, for root
// and everyone else alike. Links and renames from outside into the grant
// cross a mount and fail too (EXDEV). A fresh /proc of the helper's PID
// namespace replaces the host's where the kernel allows it, so the script
// sees only its own processes.
func isolateMounts(p Policy, hs handles) error {
	// Nothing done here may propagate back to the host's mounts.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	type bind struct {
		path         string
		tree, target int
		owned        bool
	}
	var binds []bind
	defer func() {
		for _, b := range binds {
			unix.Close(b.tree)
			if b.owned {
				unix.Close(b.target)
			}
		}
	}()
	for _, path := range append(append([]string{}, p.RWDirs...), p.RWFiles...) {
		fd, owned, err := hs.fd(path)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || (st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Mode&unix.S_IFMT != unix.S_IFREG) {
			// Devices (/dev/null) stay usable on a read-only mount.
			if owned {
				unix.Close(fd)
			}
			continue
		}
		// A detached copy of the writable tree, taken before the rest
		// turns read-only.
		tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if err != nil {
			if owned {
				unix.Close(fd)
			}
			return fmt.Errorf("copy mount of %s: %w", path, err)
		}
		binds = append(binds, bind{path: path, tree: tree, target: fd, owned: owned})
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, ro); err != nil {
		return fmt.Errorf("remount read-only: %w", err)
	}
	nosuid := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID}
	for _, b := range binds {
		if err := unix.MountSetattr(b.tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, nosuid); err != nil {
			return fmt.Errorf("nosuid on %s: %w", b.path, err)
		}
		if err := unix.MoveMount(b.tree, "", b.target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
			return fmt.Errorf("bind %s writable: %w", b.path, err)
		}
	}
	// Best effort: where the kernel refuses a new procfs (a container that
	// masks parts of /proc), the host's stays, read-only.
	_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	return nil
}
