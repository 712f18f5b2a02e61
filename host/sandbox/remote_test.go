package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// Every file of a mount is written through the one root opened for it;
// a mount whose directory cannot be opened refuses each of its files,
// and the other mounts' files are still written.
func TestWriteBackOpensEachMountOnce(t *testing.T) {
	work, ro := t.TempDir(), t.TempDir()
	missing := filepath.Join(t.TempDir(), "missing")
	mounts := []shared.Mount{
		{Role: shared.MountPath, Logical: "/workspace", HostPath: work, Writable: true},
		{Role: shared.MountPath, Logical: "/gone", HostPath: missing, Writable: true},
		{Role: shared.MountPath, Logical: "/ro", HostPath: ro},
	}
	res := writeBack(mounts, shared.Result{Files: []shared.File{
		{Path: "/workspace/a.txt", Data: []byte("a")},
		{Path: "/gone/x", Data: []byte("x")},
		{Path: "/workspace/sub/b.txt", Data: []byte("b")},
		{Path: "/gone/y", Data: []byte("y")},
		{Path: "/ro/z", Data: []byte("z")},
	}})
	for name, want := range map[string]string{"a.txt": "a", "sub/b.txt": "b"} {
		if got, err := os.ReadFile(filepath.Join(work, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	details := map[string]string{}
	for _, v := range res.Violations {
		details[v.Target] = v.Detail
	}
	if len(details) != 3 || details["/gone/x"] == "" || details["/gone/x"] != details["/gone/y"] || !strings.Contains(details["/ro/z"], "no writable mount") {
		t.Errorf("violations: %+v", res.Violations)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s was created", missing)
	}
	for _, f := range res.Files {
		if f.Data != nil {
			t.Errorf("%s keeps its data", f.Path)
		}
	}

	// Replacing the mount's directory after its first file does not move
	// the rest of the run's files.
	host := t.TempDir()
	dir := filepath.Join(host, "ws")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	roots := newMountRoots([]shared.Mount{{Logical: "/workspace", HostPath: dir, Writable: true}})
	defer roots.close()
	if err := roots.writeFile(shared.File{Path: "/workspace/first", Data: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := roots.writeFile(shared.File{Path: "/workspace/second", Data: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir+".old", "second")); err != nil {
		t.Errorf("the second file did not go into the directory opened for the first: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "second")); err == nil {
		t.Errorf("the second file went into the replacement directory")
	}
}
