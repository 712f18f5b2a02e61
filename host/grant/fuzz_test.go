package grant

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/shared"
)

// FuzzGrant feeds arbitrary capability front matter through FromFrontMatter
// (what the catalog does once per skill) and then Compute and ComputeWith
// (what a run does, the latter with no operator grant) against a fixed
// ceiling. Whatever a skill declares, the effective grant must stay inside
// the ceiling: every path absolute, clean
// and under a ceiling path of its kind, network only if the ceiling allows
// it, a positive timeout no longer than the ceiling's, and core trust only
// for a trusted skill.
func FuzzGrant(f *testing.F) {
	for _, s := range []string{
		"fs_read: [\".\", \"~/docs\", \"/etc\"]\nfs_write: ./out\nnetwork: true\ntimeout: 5\ntrust: core",
		"fs_read: ../../..\nfs_write: [\"/\", \"\"]\ntimeout: 1m30s",
		"fs_read: {a: b}\nnetwork: maybe\ntimeout: -1\ntrust: [core]",
		"fs_write: \"./w/../../x\"\ntimeout: 1e9",
		"fs_read: &a [\"./data\"]\nfs_write: *a\nnetwork: yes\ntrust: external",
	} {
		f.Add(s, "skill")
	}
	dir := f.TempDir()
	cwd := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(cwd, "data"), 0o755); err != nil {
		f.Fatal(err)
	}
	env := Env{Cwd: cwd, Home: filepath.Join(dir, "home")}
	ceiling := Ceiling{FSRead: []string{".", "~"}, FSWrite: []string{"./out"}, Timeout: 30 * time.Second, Trusted: []string{"trusted"}}
	resolve := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			if r, err := Resolve(p, env); err == nil {
				out = append(out, r)
			}
		}
		return out
	}
	readRoots, writeRoots := resolve(ceiling.FSRead), resolve(ceiling.FSWrite)
	f.Fuzz(func(t *testing.T, frontMatter, name string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(frontMatter), &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			return
		}
		fields := map[string]*yaml.Node{}
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			fields[m.Content[i].Value] = m.Content[i+1]
		}
		d, _ := FromFrontMatter(fields)
		g, _ := Compute(name, d, ceiling, env)
		checkInside(t, g, name, ceiling, readRoots, writeRoots)
		checkInside(t, ComputeWith(name, d, Operator{}, ceiling, env).Grant, name, ceiling, readRoots, writeRoots)
	})
}

// checkInside fails t if g, computed for the skill called name, reaches
// beyond ceiling, whose path roots resolve to readRoots and writeRoots.
func checkInside(t *testing.T, g Grant, name string, ceiling Ceiling, readRoots, writeRoots []string) {
	t.Helper()
	check := func(kind string, paths, roots []string) {
		for _, p := range paths {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				t.Errorf("%s path %q is not absolute and clean", kind, p)
			}
			if !shared.UnderAny(p, roots) {
				t.Errorf("%s path %q escapes the ceiling %q", kind, p, roots)
			}
		}
	}
	check("fs_read", g.FSRead, readRoots)
	check("fs_write", g.FSWrite, writeRoots)
	if g.Network && !ceiling.Network {
		t.Error("network granted above the ceiling")
	}
	if g.Timeout <= 0 || g.Timeout > ceiling.Timeout {
		t.Errorf("timeout %v outside (0, %v]", g.Timeout, ceiling.Timeout)
	}
	if g.Trust == TrustCore && name != "trusted" {
		t.Errorf("core trust for untrusted skill %q", name)
	}
	if g.Trust != TrustCore && g.Trust != TrustExternal {
		t.Errorf("trust %q", g.Trust)
	}
}
