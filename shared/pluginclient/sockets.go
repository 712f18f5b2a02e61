//go:build unix

package pluginclient

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// socketHome is where this user's plugins' socket directories go: a
// directory of skillhost's own in the temporary directory, so that the
// plugin-dir* directories go-plugin makes are not strewn over the
// temporary directory itself, and those a host that was killed left behind
// (it never got to remove them) can be told apart and swept by the next
// Launch. It is the temporary directory itself when that directory cannot
// be made safely (owned by this user, 0711: plugins run as other users
// reach their own directory by its name, and list nothing).
func socketHome(base string) string {
	dir := filepath.Join(base, fmt.Sprintf("skillhost-plugins-%d", os.Getuid()))
	if len(dir) > 48 { // see socketBase
		return base
	}
	if err := os.Mkdir(dir, 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
		return base
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o711 {
		if err == nil && fi.IsDir() && owned(fi) {
			if os.Chmod(dir, 0o711) == nil { // a umask narrowed it
				return dir
			}
		}
		return base
	}
	if !owned(fi) {
		return base
	}
	return dir
}

func owned(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// sweepSockets removes the socket directories in home whose plugin is
// gone: older than young (a plugin's start timeout or more), its socket
// refuses connections (the plugin died or exited while its host was
// killed) or it never had one. A younger directory may be a plugin's that
// another host is starting: its socket exists from bind to listen, and
// refuses connections meanwhile.
func sweepSockets(home string, young time.Duration) {
	dirs, _ := filepath.Glob(filepath.Join(home, "plugin-dir*"))
	for _, d := range dirs {
		if dead(d, young) {
			_ = os.RemoveAll(d)
		}
	}
}

func dead(dir string, young time.Duration) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) <= young {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSocket == 0 || !strings.HasPrefix(e.Name(), "plugin") {
			continue
		}
		c, err := net.DialTimeout("unix", filepath.Join(dir, e.Name()), time.Second)
		if err == nil {
			c.Close()
			return false
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, fs.ErrNotExist) {
			return false // not known to be dead
		}
	}
	return true
}
