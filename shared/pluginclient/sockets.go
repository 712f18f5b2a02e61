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
// gone: its socket refuses connections (the plugin died or exited while
// its host was killed), or, older than young, it never had one. A socket
// also refuses connections between its plugin's bind and listen, when
// another host is starting that plugin: a refusing socket bound less than
// recheckYounger ago is dialled again after recheckAfter, and its
// directory goes only if it still refuses.
func sweepSockets(home string, young time.Duration) {
	dirs, _ := filepath.Glob(filepath.Join(home, "plugin-dir*"))
	var again []string
	for _, d := range dirs {
		switch state(d, young) {
		case gone:
			_ = os.RemoveAll(d)
		case refusedYoung:
			again = append(again, d)
		}
	}
	if len(again) == 0 {
		return
	}
	pause()
	for _, d := range again {
		if state(d, young) != alive {
			_ = os.RemoveAll(d)
		}
	}
}

const (
	recheckYounger = 10 * time.Second
	recheckAfter   = 250 * time.Millisecond
)

// pause waits before the second dial; tests start listening instead.
var pause = func() { time.Sleep(recheckAfter) }

type socketState int

const (
	alive        socketState = iota // or not known to be dead
	gone                            // dead: swept
	refusedYoung                    // refused, bound moments ago
)

func state(dir string, young time.Duration) socketState {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return alive
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return alive
	}
	sockets := 0
	for _, e := range entries {
		if e.Type()&fs.ModeSocket == 0 || !strings.HasPrefix(e.Name(), "plugin") {
			continue
		}
		sockets++
		c, err := net.DialTimeout("unix", filepath.Join(dir, e.Name()), time.Second)
		if err == nil {
			c.Close()
			return alive
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, fs.ErrNotExist) {
			return alive // not known to be dead
		}
	}
	age := time.Since(fi.ModTime())
	switch {
	case sockets > 0 && age < recheckYounger:
		return refusedYoung
	case sockets > 0 || age > young:
		return gone
	}
	return alive
}
