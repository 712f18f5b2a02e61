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
// listen yet, so the socket refuses connections: its directory is young,
// and no sweep takes it. Once old, a refusing socket's directory goes,
// and a listening one's stays.
func TestSweepSparesAPluginStarting(t *testing.T) {
	home, err := os.MkdirTemp("", "sock") // short: a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	starting := filepath.Join(home, "plugin-dir1")
	listening := filepath.Join(home, "plugin-dir2")
	for _, d := range []string{starting, listening} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(starting, "plugin1")}); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(listening, "plugin2"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	sweepSockets(home, time.Minute)
	if _, err := os.Stat(starting); err != nil {
		t.Fatalf("the directory of a plugin still starting was swept: %v", err)
	}
	old := time.Now().Add(-2 * time.Minute)
	for _, d := range []string{starting, listening} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	sweepSockets(home, time.Minute)
	if _, err := os.Stat(starting); !os.IsNotExist(err) {
		t.Errorf("an old directory whose socket refuses connections was kept: %v", err)
	}
	if _, err := os.Stat(listening); err != nil {
		t.Errorf("the directory of a listening plugin was swept: %v", err)
	}
}
