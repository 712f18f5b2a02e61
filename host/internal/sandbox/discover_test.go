package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDiscover(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir, name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "skillhost-sandbox-null", 0o755)
	write(a, "skillhost-sandbox-noexec", 0o644)
	write(a, "unrelated", 0o755)
	os.Mkdir(filepath.Join(a, "skillhost-sandbox-dir"), 0o755)
	write(b, "skillhost-sandbox-null", 0o755)
	write(b, "skillhost-sandbox-landlock", 0o755)
	write(b, "skillhost-sandbox-win.exe", 0o755)
	missing := filepath.Join(t.TempDir(), "missing")

	found, warnings := Discover([]string{a, missing, b}, false)
	if got := Names(found); !reflect.DeepEqual(got, []string{"landlock", "null", "win"}) {
		t.Fatalf("names = %q", got)
	}
	if found["null"].Path != filepath.Join(a, "skillhost-sandbox-null") {
		t.Errorf("the first directory must win: %s", found["null"].Path)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"skillhost-sandbox-noexec is not executable", "skillhost-sandbox-dir is a directory",
		filepath.Join(b, "skillhost-sandbox-null") + " is shadowed by " + filepath.Join(a, "skillhost-sandbox-null")} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
	if strings.Contains(joined, "missing") {
		t.Errorf("a missing default directory is not worth a warning:\n%s", joined)
	}
	_, warnings = Discover([]string{missing}, true)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "no such file") {
		t.Errorf("a missing configured directory must be reported: %q", warnings)
	}
}

func TestAutoFor(t *testing.T) {
	tests := []struct {
		goos    string
		name    string
		confine bool
	}{{"darwin", Seatbelt, true}, {"linux", Landlock, true}, {"freebsd", Null, false}, {"windows", Null, false}}
	for _, tt := range tests {
		if name, confine := AutoFor(tt.goos); name != tt.name || confine != tt.confine {
			t.Errorf("AutoFor(%s) = %s %v", tt.goos, name, confine)
		}
	}
}

// A program started with go run finds the plugins in its module's bin/.
func TestDefaultDirsHaveTheModuleBin(t *testing.T) {
	mod := t.TempDir()
	for _, d := range []string{"bin", "sub/dir"} {
		if err := os.MkdirAll(filepath.Join(mod, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(mod, "sub", "dir"))
	want, _ := filepath.EvalSymlinks(filepath.Join(mod, "bin"))
	found := false
	for _, d := range DefaultDirs() {
		if r, _ := filepath.EvalSymlinks(d); r == want {
			found = true
		}
	}
	if !found {
		t.Errorf("DefaultDirs() = %q, without %s", DefaultDirs(), want)
	}
}
