package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillhost/skillhost/internal/testskill"
)

// writeSkill is testskill.Add for this package: the skill directory
// root/dir with frontMatter verbatim (often deliberately broken YAML) and
// a one-line body. It stays a shorthand only because direct_test.go calls
// it too; new tests call testskill.Add.
func writeSkill(t *testing.T, root, dir, frontMatter string) string {
	t.Helper()
	return testskill.Add(t, root, dir, testskill.Skill{FrontMatter: frontMatter, Body: "Body of " + dir + "\n"})
}

func TestFixtureCatalog(t *testing.T) {
	c := New([]string{"../../testdata/skills"})
	s, err := c.Find("test_skill")
	if err != nil || s.Name != "test_skill" {
		t.Fatalf("Find(test_skill) = %v, %v", s, err)
	}
	if _, err := c.Find("bad_skill"); !IsNotFound(err) {
		t.Fatalf("bad_skill must be skipped, got %v", err)
	}
	names := c.Names()
	for _, want := range []string{"scripted_skill", "test_skill", "crlf_skill", "123"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("names %q lack %q", names, want)
		}
	}
	warnings := strings.Join(c.Warnings(), "\n")
	for _, w := range []string{"bad_skill/SKILL.md missing 'description'", "no_name_skill/SKILL.md missing 'name'"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q:\n%s", w, warnings)
		}
	}
}

func TestForgivingScan(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "good", "name: good\ndescription: fine")
	writeSkill(t, root, "bad-yaml", "name: [\ndescription: x")
	writeSkill(t, root, "dup-key", "name: d\ndescription: a\ndescription: b")
	writeSkill(t, root, "date", "name: date\ndescription: 2024-01-01")
	writeSkill(t, root, "number", "name: 42\ndescription: true")
	writeSkill(t, root, "list-name", "name: [a]\ndescription: x")
	writeSkill(t, root, ".hidden", "name: hidden\ndescription: in a dot directory")
	writeSkill(t, root, ".git", "name: git\ndescription: never scanned")
	writeSkill(t, root, "node_modules", "name: nm\ndescription: never scanned")
	os.MkdirAll(filepath.Join(root, "not-a-skill"), 0o755)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("x"), 0o644)

	c := New([]string{root})
	if got, want := c.Names(), []string{"42", "date", "good", "hidden"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	warnings := strings.Join(c.Warnings(), "\n")
	for _, dir := range []string{"bad-yaml", "dup-key", "list-name"} {
		if !strings.Contains(warnings, "skipping "+filepath.Join(root, dir)+":") {
			t.Errorf("no warning naming %s:\n%s", dir, warnings)
		}
	}
	if strings.Contains(warnings, "not-a-skill") {
		t.Errorf("a directory without SKILL.md is not a problem:\n%s", warnings)
	}
}

func TestUnreadableBundle(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	root := t.TempDir()
	writeSkill(t, root, "good", "name: good\ndescription: fine")
	p := writeSkill(t, root, "locked", "name: locked\ndescription: x")
	os.Chmod(filepath.Join(p, "SKILL.md"), 0)
	c := New([]string{root})
	if got := c.Names(); !reflect.DeepEqual(got, []string{"good"}) {
		t.Fatalf("names = %q", got)
	}
	if !strings.Contains(strings.Join(c.Warnings(), "\n"), "locked") {
		t.Fatalf("no warning for the unreadable bundle: %q", c.Warnings())
	}
}

func TestDuplicateNamesFirstRootWins(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeSkill(t, a, "one", "name: same\ndescription: from a")
	writeSkill(t, b, "two", "name: same\ndescription: from b")
	writeSkill(t, b, "zz", "name: other\ndescription: only in b")
	writeSkill(t, b, "aa", "name: other\ndescription: first in b by directory order")
	for i := 0; i < 3; i++ { // deterministic
		c := New([]string{a, b})
		s, _ := c.Find("same")
		o, _ := c.Find("other")
		if s.Description != "from a" || o.Description != "first in b by directory order" {
			t.Fatalf("got %q and %q", s.Description, o.Description)
		}
		if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, `skill name "same" is already taken by `+filepath.Join(a, "one")) {
			t.Fatalf("no duplicate warning:\n%s", w)
		}
	}
}

func TestFindVariants(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "pdf-tools", "name: pdf-tools\ndescription: x")
	writeSkill(t, root, "data_clean", "name: data_clean\ndescription: x")
	writeSkill(t, root, "Title", "name: Dynamics 365 Automation\ndescription: x")
	writeSkill(t, root, "amb1", "name: a-b\ndescription: x")
	writeSkill(t, root, "amb2", "name: a_b\ndescription: x")
	writeSkill(t, root, "folder-name", "name: front-matter-name\ndescription: x")
	c := New([]string{root})
	tests := map[string]string{
		"pdf-tools": "pdf-tools", "pdf_tools": "pdf-tools", "PDF Tools": "pdf-tools",
		"data-clean": "data_clean", "dynamics-365-automation": "Dynamics 365 Automation",
		"a-b": "a-b", "a_b": "a_b", // exact names win over variants
		"folder_name": "front-matter-name",
	}
	for in, want := range tests {
		s, err := c.Find(in)
		if err != nil || s.Name != want {
			t.Errorf("Find(%q) = %v, %v; want %q", in, s, err, want)
		}
	}
	var amb *AmbiguousError
	if _, err := c.Find("A B"); !errors.As(err, &amb) || len(amb.Matches) != 2 {
		t.Errorf("Find(A B) = %v, want ambiguous", err)
	}
	_, err := c.Find("pdf-tool")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !reflect.DeepEqual(nf.Suggestions, []string{"pdf-tools"}) {
		t.Errorf("Find(pdf-tool) = %v", err)
	}
	if !strings.Contains(err.Error(), `did you mean "pdf-tools"?`) {
		t.Errorf("message: %v", err)
	}
}

func TestMissingRoot(t *testing.T) {
	c := New([]string{filepath.Join(t.TempDir(), "nope")})
	if len(c.All()) != 0 || !strings.Contains(strings.Join(c.Warnings(), ""), "no such file") {
		t.Fatalf("warnings = %q", c.Warnings())
	}
}

func TestRootIsASkill(t *testing.T) {
	root := t.TempDir()
	p := writeSkill(t, root, "solo", "name: solo\ndescription: x")
	if got := New([]string{p}).Names(); !reflect.DeepEqual(got, []string{"solo"}) {
		t.Fatalf("names = %q", got)
	}
}

func TestLazyAndReload(t *testing.T) {
	root := t.TempDir()
	c := New([]string{root})
	writeSkill(t, root, "late", "name: late\ndescription: written after New")
	if _, err := c.Find("late"); err != nil {
		t.Fatalf("lazy load missed a skill written before first use: %v", err)
	}
	g := c.Generation()
	writeSkill(t, root, "later", "name: later\ndescription: written after load")
	if _, err := c.Find("later"); err == nil {
		t.Fatal("loaded catalogs do not rescan by themselves")
	}
	c.Reload()
	if _, err := c.Find("later"); err != nil || c.Generation() == g {
		t.Fatalf("Reload: %v, generation %d -> %d", err, g, c.Generation())
	}
}

func TestConcurrentUse(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 20; i++ {
		writeSkill(t, root, fmt.Sprintf("s%02d", i), fmt.Sprintf("name: s%02d\ndescription: skill %d", i, i))
	}
	c := New([]string{root})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if g == 0 && i%10 == 0 {
					c.Reload()
				}
				if _, err := c.Find(fmt.Sprintf("s%02d", i%20)); err != nil {
					t.Error(err)
					return
				}
				if n := len(c.All()); n != 20 {
					t.Errorf("All() has %d skills", n)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestSuggest(t *testing.T) {
	names := []string{"pdf-tools", "pdf-merge", "csv-clean", "deploy"}
	if got := Suggest("pdf", names); !reflect.DeepEqual(got, []string{"pdf-merge", "pdf-tools"}) {
		t.Errorf("Suggest(pdf) = %q", got)
	}
	if got := Suggest("deplyo", names); !reflect.DeepEqual(got, []string{"deploy"}) {
		t.Errorf("Suggest(deplyo) = %q", got)
	}
	if got := Suggest("zzz", names); got != nil {
		t.Errorf("Suggest(zzz) = %q", got)
	}
}

// A root lists skill directories by their listing's type: a symlink to a
// skill directory counts, files and symlinks to files do not.
func TestRootEntriesByType(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	writeSkill(t, root, "plain", "name: plain\ndescription: a directory")
	target := writeSkill(t, elsewhere, "linked", "name: linked\ndescription: through a symlink")
	if err := os.Symlink(target, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "not-a-dir")
	if err := os.WriteFile(file, []byte("---\nname: file\ndescription: x\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(root, "link-to-file")); err != nil {
		t.Fatal(err)
	}
	if got, want := New([]string{root}).Names(), []string{"linked", "plain"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

// --skills at the root of a clone of a skills repository finds the skills
// in its skills/ folder (issue 35).
func TestRepositoryRoot(t *testing.T) {
	repo := t.TempDir()
	writeSkill(t, filepath.Join(repo, "skills"), "pdf", "name: pdf\ndescription: reads PDFs\n")
	writeSkill(t, filepath.Join(repo, "skills"), "xlsx", "name: xlsx\ndescription: edits spreadsheets\n")
	if err := os.MkdirAll(filepath.Join(repo, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := New([]string{repo})
	if got, want := c.Names(), []string{"pdf", "xlsx"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if s, err := c.Find("pdf"); err != nil || s.Name != "pdf" {
		t.Errorf("Find(pdf) = %v, %v", s, err)
	}
	if got, want := c.Searched(), []string{repo, filepath.Join(repo, "skills")}; !slices.Equal(got, want) {
		t.Errorf("Searched = %q, want %q", got, want)
	}
}

// An unknown skill, when no skill loaded at all, names the directories
// looked in.
func TestNoSkillsNamesWhereItLooked(t *testing.T) {
	empty := t.TempDir()
	os.MkdirAll(filepath.Join(empty, ".claude", "skills"), 0o755)
	c := New([]string{empty})
	_, err := c.Find("pdf")
	want := fmt.Sprintf("unknown skill %q; no skills found: looked for directories holding a SKILL.md in %s, %s", "pdf", empty, filepath.Join(empty, ".claude", "skills"))
	if err == nil || err.Error() != want || !IsNotFound(err) {
		t.Errorf("Find = %v, want %s", err, want)
	}
	// With skills loaded, an unknown name says nothing of where.
	writeSkill(t, empty, "pdf-tools", "name: pdf-tools\ndescription: reads PDFs\n")
	c = New([]string{empty})
	if _, err := c.Find("pdf"); err == nil || strings.Contains(err.Error(), "looked") {
		t.Errorf("Find with skills loaded = %v", err)
	}
}
