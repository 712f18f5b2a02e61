package skilltar

import (
	"archive/tar"
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/digest.golden")

// skill writes a small skill into a fresh directory.
func skill(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]struct {
		body string
		mode os.FileMode
	}{
		"SKILL.md":          {"---\nname: s\ndescription: d\n---\nbody\n", 0o600},
		"scripts/run.py":    {"#!/usr/bin/env python3\nprint(1)\n", 0o700},
		"a.txt":             {"a\n", 0o644},
		"a/b":               {"b\n", 0o664},
		"references/ref.md": {"ref\n", 0o644},
	}
	for name, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.body), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	return dir
}

func digest(t *testing.T, dir string) string {
	t.Helper()
	d, _, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDigestIsStable(t *testing.T) {
	dir := skill(t)
	got := digest(t, dir)
	golden := filepath.Join("testdata", "digest.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(string(want)) {
		t.Errorf("digest = %s, want %s (run with -update only if the canonical form changed on purpose)", got, want)
	}

	// Times, group-write and owner-only bits do not count.
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, p := range []string{"SKILL.md", "a", "scripts/run.py"} {
		if err := os.Chtimes(filepath.Join(dir, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "a.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	if d := digest(t, dir); d != got {
		t.Errorf("mtimes and non-exec mode bits changed the digest: %s", d)
	}
	// Content and the execute bit do.
	if err := os.Chmod(filepath.Join(dir, "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if d := digest(t, dir); d == got {
		t.Error("the execute bit did not change the digest")
	}
	if err := os.Chmod(filepath.Join(dir, "a.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a/b"), []byte("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := digest(t, dir); d == got {
		t.Error("new content did not change the digest")
	}
}

func TestCanonicalEntries(t *testing.T) {
	dir := skill(t)
	var buf bytes.Buffer
	d, size, err := Write(&buf, dir)
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(buf.Len()) || d != digest(t, dir) {
		t.Errorf("Write said %d bytes, %s; wrote %d", size, d, buf.Len())
	}
	tr := tar.NewReader(&buf)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.ModTime.Unix() != 0 || len(h.Xattrs) != 0 {
			t.Errorf("%s: header not canonical: %+v", h.Name, h)
		}
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir || h.Name == "scripts/run.py" {
			wantMode = 0o755
		}
		if h.Mode != wantMode {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, wantMode)
		}
	}
	want := "SKILL.md a.txt a/ a/b references/ references/ref.md scripts/ scripts/run.py"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entries = %s\nwant      %s", got, want)
	}
}

func TestRefusesWhatIsNotAFileOrDirectory(t *testing.T) {
	dir := skill(t)
	link := filepath.Join(dir, "references", "passwd")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	_, _, err := Digest(dir)
	if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlink in the skill: %v", err)
	}
	if _, _, err := Digest(filepath.Join(dir, "SKILL.md")); err == nil {
		t.Error("a file was packed as a skill directory")
	}
}
