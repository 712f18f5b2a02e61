package temporal

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared/skilltar"
)

func TestSkillCache(t *testing.T) {
	skill := t.TempDir()
	os.MkdirAll(filepath.Join(skill, "scripts"), 0o755)
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: s\ndescription: d\n---\n"), 0o644)
	os.WriteFile(filepath.Join(skill, "scripts", "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	var tarball bytes.Buffer
	digest, _, err := skilltar.Write(&tarball, skill)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newSkillCache(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	fetch := func(w io.Writer) error { calls++; _, err := w.Write(tarball.Bytes()); return err }
	dir, fetched, err := c.get(digest, fetch)
	if err != nil || !fetched {
		t.Fatalf("first get: %v %v", fetched, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "scripts", "run.sh")); err != nil || string(data) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("unpacked script: %q %v", data, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "scripts", "run.sh")); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v", fi.Mode())
	}
	if _, fetched, err := c.get(digest, fetch); err != nil || fetched || calls != 1 {
		t.Errorf("second get fetched again: %v %v, %d calls", fetched, err, calls)
	}
	// A tar that is not the digest's is refused, and nothing is kept.
	other := "sha256:" + strings.Repeat("ab", 32)
	if _, _, err := c.get(other, fetch); err == nil || !strings.Contains(err.Error(), "the tar's digest is") {
		t.Errorf("a wrong tar: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, strings.Repeat("ab", 32))); err == nil {
		t.Error("a wrong tar was kept")
	}
	for _, bad := range []string{"md5:x", "sha256:12", ""} {
		if _, _, err := c.get(bad, fetch); err == nil {
			t.Errorf("digest %q accepted", bad)
		}
	}
}

func TestUnpackRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		hdr  tar.Header
	}{
		{"a way out", tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644}},
		{"an absolute path", tar.Header{Name: "/etc/evil", Typeflag: tar.TypeReg, Mode: 0o644}},
		{"a symlink", tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}},
		{"an unclean path", tar.Header{Name: "a/./b", Typeflag: tar.TypeReg, Mode: 0o644}},
	} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		tw.WriteHeader(&c.hdr)
		tw.Close()
		p := filepath.Join(t.TempDir(), "x.tar")
		os.WriteFile(p, b.Bytes(), 0o644)
		if err := unpack(p, filepath.Join(t.TempDir(), "out")); err == nil {
			t.Errorf("%s: unpacked", c.name)
		}
	}
	_ = sha256.New
	_ = hex.EncodeToString
}

// Past its limit the cache drops the skills used longest ago, never one a
// run holds.
func TestSkillCacheEvicts(t *testing.T) {
	c, err := newSkillCache(t.TempDir(), 3<<20)
	if err != nil {
		t.Fatal(err)
	}
	skill := func(fill byte) (string, []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: s\ndescription: d\n---\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "blob"), bytes.Repeat([]byte{fill}, 1<<20), 0o644)
		var b bytes.Buffer
		digest, _, err := skilltar.Write(&b, dir)
		if err != nil {
			t.Fatal(err)
		}
		return digest, b.Bytes()
	}
	var digests []string
	for i := range 4 {
		d, data := skill(byte('a' + i))
		digests = append(digests, d)
		if _, _, err := c.get(d, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			t.Fatal(err)
		}
		if i != 0 {
			c.release(d) // the first stays in use
		}
	}
	held := func(d string) bool {
		h, _ := hexOf(d)
		_, err := os.Stat(filepath.Join(c.dir, h))
		return err == nil
	}
	if !held(digests[0]) || held(digests[1]) || !held(digests[3]) {
		t.Errorf("kept %v %v %v %v; want the one in use and the newest, not the oldest free one",
			held(digests[0]), held(digests[1]), held(digests[2]), held(digests[3]))
	}
}
