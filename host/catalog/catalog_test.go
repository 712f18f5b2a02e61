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
	testskill.Add(t, root, "good", testskill.Skill{FrontMatter: "name: good\ndescription: fine"})
	testskill.Add(t, root, "bad-yaml", testskill.Skill{FrontMatter: "name: [\ndescription: x"})
	testskill.Add(t, root, "dup-key", testskill.Skill{FrontMatter: "name: d\ndescription: a\ndescription: b"})
	testskill.Add(t, root, "date", testskill.Skill{FrontMatter: "name: date\ndescription: 2024-01-01"})
	testskill.Add(t, root, "number", testskill.Skill{FrontMatter: "name: 42\ndescription: true"})
	testskill.Add(t, root, "list-name", testskill.Skill{FrontMatter: "name: [a]\ndescription: x"})
	testskill.Add(t, root, ".hidden", testskill.Skill{FrontMatter: "name: hidden\ndescription: in a dot directory"})
	testskill.Add(t, root, ".git", testskill.Skill{FrontMatter: "name: git\ndescription: never scanned"})
	testskill.Add(t, root, "node_modules", testskill.Skill{FrontMatter: "name: nm\ndescription: never scanned"})
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
	testskill.Add(t, root, "good", testskill.Skill{FrontMatter: "name: good\ndescription: fine"})
	p := testskill.Add(t, root, "locked", testskill.Skill{FrontMatter: "name: locked\ndescription: x"})
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
	testskill.Add(t, a, "one", testskill.Skill{FrontMatter: "name: same\ndescription: from a"})
	testskill.Add(t, b, "two", testskill.Skill{FrontMatter: "name: same\ndescription: from b"})
	testskill.Add(t, b, "zz", testskill.Skill{FrontMatter: "name: other\ndescription: only in b"})
	testskill.Add(t, b, "aa", testskill.Skill{FrontMatter: "name: other\ndescription: first in b by directory order"})
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
	testskill.Add(t, root, "pdf-tools", testskill.Skill{FrontMatter: "name: pdf-tools\ndescription: x"})
	testskill.Add(t, root, "data_clean", testskill.Skill{FrontMatter: "name: data_clean\ndescription: x"})
	testskill.Add(t, root, "Title", testskill.Skill{FrontMatter: "name: Dynamics 365 Automation\ndescription: x"})
	testskill.Add(t, root, "amb1", testskill.Skill{FrontMatter: "name: a-b\ndescription: x"})
	testskill.Add(t, root, "amb2", testskill.Skill{FrontMatter: "name: a_b\ndescription: x"})
	testskill.Add(t, root, "folder-name", testskill.Skill{FrontMatter: "name: front-matter-name\ndescription: x"})
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
	p := testskill.Add(t, root, "solo", testskill.Skill{FrontMatter: "name: solo\ndescription: x"})
	if got := New([]string{p}).Names(); !reflect.DeepEqual(got, []string{"solo"}) {
		t.Fatalf("names = %q", got)
	}
}

func TestLazyAndReload(t *testing.T) {
	root := t.TempDir()
	c := New([]string{root})
	testskill.Add(t, root, "late", testskill.Skill{FrontMatter: "name: late\ndescription: written after New"})
	if _, err := c.Find("late"); err != nil {
		t.Fatalf("lazy load missed a skill written before first use: %v", err)
	}
	g := c.Generation()
	testskill.Add(t, root, "later", testskill.Skill{FrontMatter: "name: later\ndescription: written after load"})
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
		testskill.Add(t, root, fmt.Sprintf("s%02d", i), testskill.Skill{FrontMatter: fmt.Sprintf("name: s%02d\ndescription: skill %d", i, i)})
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
	testskill.Add(t, root, "plain", testskill.Skill{FrontMatter: "name: plain\ndescription: a directory"})
	target := testskill.Add(t, elsewhere, "linked", testskill.Skill{FrontMatter: "name: linked\ndescription: through a symlink"})
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
	testskill.Add(t, filepath.Join(repo, "skills"), "pdf", testskill.Skill{FrontMatter: "name: pdf\ndescription: reads PDFs\n"})
	testskill.Add(t, filepath.Join(repo, "skills"), "xlsx", testskill.Skill{FrontMatter: "name: xlsx\ndescription: edits spreadsheets\n"})
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
	testskill.Add(t, empty, "pdf-tools", testskill.Skill{FrontMatter: "name: pdf-tools\ndescription: reads PDFs\n"})
	c = New([]string{empty})
	if _, err := c.Find("pdf"); err == nil || strings.Contains(err.Error(), "looked") {
		t.Errorf("Find with skills loaded = %v", err)
	}
}
