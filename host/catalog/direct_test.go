package catalog

import (
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost/internal/testskill"
)

// TestDirectFindAgreesWithFullLoad checks that Find before a load (which may
// read just the one bundle) returns what Find after a full load returns,
// across the layouts where they could differ: a name claimed by a bundle in
// another directory, earlier roots, a root that is itself a skill, broken
// and mismatched bundles.
func TestDirectFindAgreesWithFullLoad(t *testing.T) {
	type layout func(t *testing.T) []string // returns roots
	cases := map[string]struct {
		roots  layout
		name   string
		direct bool // answered without a load
	}{
		"plain": {name: "a", direct: true, roots: func(t *testing.T) []string {
			r := t.TempDir()
			testskill.Add(t, r, "a", testskill.Skill{FrontMatter: "name: a\ndescription: x"})
			testskill.Add(t, r, "b", testskill.Skill{FrontMatter: "name: b\ndescription: x"})
			return []string{r}
		}},
		"claimed by an earlier directory in the same root": {name: "deploy", direct: true, roots: func(t *testing.T) []string {
			r := t.TempDir()
			testskill.Add(t, r, "aaa", testskill.Skill{FrontMatter: "name: deploy\ndescription: impostor"})
			testskill.Add(t, r, "deploy", testskill.Skill{FrontMatter: "name: deploy\ndescription: real"})
			return []string{r}
		}},
		"claimed by a mismatched directory in an earlier root": {name: "deploy", direct: true, roots: func(t *testing.T) []string {
			r1, r2 := t.TempDir(), t.TempDir()
			testskill.Add(t, r1, "other", testskill.Skill{FrontMatter: "name: deploy\ndescription: impostor"})
			testskill.Add(t, r2, "deploy", testskill.Skill{FrontMatter: "name: deploy\ndescription: real"})
			return []string{r1, r2}
		}},
		"first root wins": {name: "deploy", direct: true, roots: func(t *testing.T) []string {
			r1, r2 := t.TempDir(), t.TempDir()
			testskill.Add(t, r1, "deploy", testskill.Skill{FrontMatter: "name: deploy\ndescription: first"})
			testskill.Add(t, r2, "deploy", testskill.Skill{FrontMatter: "name: deploy\ndescription: second"})
			return []string{r1, r2}
		}},
		"directory holds another name": {name: "deploy", roots: func(t *testing.T) []string {
			r := t.TempDir()
			testskill.Add(t, r, "deploy", testskill.Skill{FrontMatter: "name: other\ndescription: x"})
			testskill.Add(t, r, "zzz", testskill.Skill{FrontMatter: "name: deploy\ndescription: real"})
			return []string{r}
		}},
		"broken bundle in the named directory": {name: "deploy", roots: func(t *testing.T) []string {
			r := t.TempDir()
			testskill.Add(t, r, "deploy", testskill.Skill{FrontMatter: "name: [\ndescription: x"})
			testskill.Add(t, r, "zzz", testskill.Skill{FrontMatter: "name: deploy\ndescription: real"})
			return []string{r}
		}},
		"root that is itself the skill": {name: "solo", direct: true, roots: func(t *testing.T) []string {
			r := filepath.Join(t.TempDir(), "solo")
			testskill.Add(t, filepath.Dir(r), "solo", testskill.Skill{FrontMatter: "name: solo\ndescription: x"})
			return []string{r}
		}},
		"missing root first": {name: "a", direct: true, roots: func(t *testing.T) []string {
			r := t.TempDir()
			testskill.Add(t, r, "a", testskill.Skill{FrontMatter: "name: a\ndescription: x"})
			return []string{filepath.Join(r, "nope"), r}
		}},
		"loose spelling": {name: "My_Skill", roots: func(t *testing.T) []string {
			r := t.TempDir()
			testskill.Add(t, r, "my-skill", testskill.Skill{FrontMatter: "name: my-skill\ndescription: x"})
			return []string{r}
		}},
		"unknown": {name: "nope", roots: func(t *testing.T) []string {
			r := t.TempDir()
			testskill.Add(t, r, "a", testskill.Skill{FrontMatter: "name: a\ndescription: x"})
			return []string{r}
		}},
		"path-like name": {name: "../a", roots: func(t *testing.T) []string {
			r := t.TempDir()
			testskill.Add(t, r, "a", testskill.Skill{FrontMatter: "name: a\ndescription: x"})
			return []string{filepath.Join(r, "sub")}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			roots := tc.roots(t)
			lazy := New(roots, IgnoreMissingRoots())
			got, gotErr := lazy.Find(tc.name)
			if loaded := lazy.snap.Load() != nil; loaded == tc.direct {
				t.Errorf("catalog loaded = %v, want %v", loaded, !tc.direct)
			}
			full := New(roots, IgnoreMissingRoots())
			full.Reload()
			want, wantErr := full.Find(tc.name)
			if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("errors differ: direct %v, full %v", gotErr, wantErr)
			}
			if want != nil && (got == nil || got.Dir != want.Dir || got.Description != want.Description) {
				t.Fatalf("direct found %+v, full load %+v", got, want)
			}
		})
	}
}

// TestNamedDirectoryWinsInFullLoad pins the precedence direct relies on,
// and that the loser is reported.
func TestNamedDirectoryWinsInFullLoad(t *testing.T) {
	r := t.TempDir()
	testskill.Add(t, r, "aaa", testskill.Skill{FrontMatter: "name: deploy\ndescription: impostor"})
	testskill.Add(t, r, "deploy", testskill.Skill{FrontMatter: "name: deploy\ndescription: real"})
	c := New([]string{r})
	all := c.All()
	if len(all) != 1 || all[0].Description != "real" {
		t.Fatalf("All = %+v", all)
	}
	w := c.Warnings()
	found := false
	for _, s := range w {
		found = found || s == "skipping "+filepath.Join(r, "aaa")+`: skill name "deploy" is taken by `+filepath.Join(r, "deploy")+", whose directory is named after it"
	}
	if !found {
		t.Errorf("warnings %q lack the skipped impostor", w)
	}
}
