//go:build unix

package pluginclient

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A plugin another host is starting has bound its socket but may not
// listen yet, so the socket refuses connections: a sweep dials such a
// young socket again before it takes the directory, and spares it if it
// listens by then. A socket that still refuses, young or old, goes; a
// listening one stays.
func TestSweepSparesAPluginStarting(t *testing.T) {
	home, err := os.MkdirTemp("", "sock") // short: a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	dir := func(name string) string {
		d := filepath.Join(home, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	starting, dead, listening := dir("plugin-dir1"), dir("plugin-dir2"), dir("plugin-dir3")
	bound := func(d string) int {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Close(fd) })
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(d, "plugin1")}); err != nil {
			t.Fatal(err)
		}
		return fd
	}
	startingFD := bound(starting)
	bound(dead)
	l, err := net.Listen("unix", filepath.Join(listening, "plugin1"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// The starting plugin listens while the sweep waits to dial it again.
	paused := false
	pause = func() {
		paused = true
		if err := syscall.Listen(startingFD, 1); err != nil {
			t.Error(err)
		}
	}
	defer func() { pause = func() { time.Sleep(recheckAfter) } }()
	sweepSockets(home, time.Minute)
	if !paused {
		t.Error("the sweep did not dial the young refusing sockets again")
	}
	if _, err := os.Stat(starting); err != nil {
		t.Errorf("the directory of a plugin still starting was swept: %v", err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a young directory whose socket still refuses connections was kept: %v", err)
	}
	if _, err := os.Stat(listening); err != nil {
		t.Errorf("the directory of a listening plugin was swept: %v", err)
	}
}
