package changeset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"syscall"

	"golang.org/x/sys/unix"
)

// stageTree makes a host tree and an upper layer beside it.
func stageTree(t *testing.T) (root, upper string) {
	t.Helper()
	base := t.TempDir()
	root, upper = filepath.Join(base, "root"), filepath.Join(base, "upper")
	for _, d := range []string{root, upper, filepath.Join(root, "dir"), filepath.Join(root, "gone"), filepath.Join(root, "gone", ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, "same.txt"), "same\n")
	write(t, filepath.Join(root, "edit.txt"), "before\n")
	write(t, filepath.Join(root, "del.txt"), "delete me\n")
	write(t, filepath.Join(root, "dir", "old.txt"), "old\n")
	write(t, filepath.Join(root, "gone", "a.txt"), "a\n")
	write(t, filepath.Join(root, "gone", ".git", "config"), "[core]\n")
	return root, upper
}

func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func whiteoutAt(t *testing.T, path string) {
	t.Helper()
	if err := unix.Mknod(path, unix.S_IFCHR|0o000, 0); err != nil {
		t.Skipf("cannot make a whiteout here: %v", err)
	}
}

func TestScan(t *testing.T) {
	root, upper := stageTree(t)
	write(t, filepath.Join(upper, "same.txt"), "same\n") // copied up, unchanged
	write(t, filepath.Join(upper, "edit.txt"), "after\n")
	write(t, filepath.Join(upper, "new", "file.txt"), "new\n")
	whiteoutAt(t, filepath.Join(upper, "del.txt"))
	whiteoutAt(t, filepath.Join(upper, "gone"))
	os.MkdirAll(filepath.Join(upper, "dir"), 0o755)
	if err := unix.Lsetxattr(filepath.Join(upper, "dir"), "user.overlay.opaque", []byte("y"), 0); err != nil {
		t.Skipf("no user xattrs here: %v", err)
	}
	write(t, filepath.Join(upper, "dir", "fresh.txt"), "fresh\n")
	os.Symlink("/etc/passwd", filepath.Join(upper, "link"))

	cs, err := Scan(upper, root, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Kind+" "+c.Type+" "+c.Rel())
	}
	want := []string{
		"deleted file del.txt",
		"deleted file dir/old.txt", // the opaque dir replaced what it held
		"created file dir/fresh.txt",
		"modified file edit.txt",
		"deleted file gone/a.txt", // a deleted tree, deepest first
		"deleted file gone/.git/config",
		"deleted dir gone/.git",
		"deleted dir gone",
		"created symlink link",
		"created dir new",
		"created file new/file.txt",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("scan:\n got %q\nwant %q", got, want)
	}
}

func TestJudge(t *testing.T) {
	p := New([]string{"secrets", "/abs/tree"}, []string{"AGENTS.md", "/r/exempt"})
	p.Hooks = func(dir string) []string {
		if dir == "/r/repo" {
			return []string{"/r/repo/tools/hooks"}
		}
		return nil
	}
	file := func(path string) Change {
		return Change{Path: path, Root: "/r", Kind: Created, Type: TypeFile, Mode: 0o644}
	}
	for _, tc := range []struct {
		c    Change
		want string // a word of the reason; "" allowed
	}{
		{file("/r/out.txt"), ""},
		{file("/r/.git/config"), ".git"},
		{file("/r/deep/sub/.git/hooks/pre-commit"), ".git"},
		{file("/r/.GIT/config"), ".git"},
		{file("/r/.git"), ".git"},
		{Change{Path: "/r/.git", Root: "/r", Kind: Deleted, Type: TypeDir}, ".git"},
		{file("/r/x.git/config"), ""},
		{file("/r/.cursor/mcp.json"), ".cursor"},
		{file("/r/p/.vscode/tasks.json"), ".vscode"},
		{file("/r/CLAUDE.md"), "CLAUDE.md"},
		{file("/r/AGENTS.md"), ""}, // unprotected by name
		{file("/r/.github/copilot-instructions.md"), "copilot"},
		{file("/r/.github/workflows/ci.yml"), ""},
		{file("/r/home/.bashrc"), ".bashrc"},
		{file("/r/home/.gitconfig"), ".gitconfig"},
		{file("/r/home/.config/git/config"), ".config/git"},
		{file("/r/home/.config/other/x"), ""},
		{file("/r/a/secrets"), "sandbox.protected"},
		{file("/abs/tree/x"), "sandbox.protected"},
		{file("/r/exempt/.git/config"), ""}, // exempted tree
		{file("/r/repo/tools/hooks/pre-commit"), "hooksPath"},
		{file("/r/repo/tools/other"), ""},
		{Change{Path: "/r/exempt/dev", Root: "/r", Kind: Created, Type: TypeOther}, "device"},
		{Change{Path: "/r/suid", Root: "/r", Kind: Created, Type: TypeFile, Mode: 0o4755}, "set-uid"},
		{Change{Path: "/r/l", Root: "/r", Kind: Created, Type: TypeSymlink, Target: "../etc/passwd"}, "outside"},
		{Change{Path: "/r/a/l", Root: "/r", Kind: Created, Type: TypeSymlink, Target: "../b"}, ""},
		{Change{Path: "/r/l", Root: "/r", Kind: Created, Type: TypeSymlink, Target: "/etc/passwd"}, "outside"},
	} {
		got := p.Judge(tc.c, false)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Judge(%s %s %s) = %q, want %q", tc.c.Kind, tc.c.Type, tc.c.Path, got, tc.want)
		}
	}
	// Naming a path lifts the names, never the types.
	if got := p.Judge(file("/r/.git/config"), true); got != "" {
		t.Errorf("named .git/config refused: %s", got)
	}
	if got := p.Judge(Change{Path: "/r/suid", Root: "/r", Kind: Created, Type: TypeFile, Mode: 0o4755}, true); got == "" {
		t.Error("a named set-uid file was allowed")
	}
}

func TestApply(t *testing.T) {
	root, upper := stageTree(t)
	write(t, filepath.Join(upper, "edit.txt"), "after\n")
	write(t, filepath.Join(upper, "new", "file.txt"), "new\n")
	write(t, filepath.Join(upper, ".git", "config"), "planted\n")
	whiteoutAt(t, filepath.Join(upper, "del.txt"))
	whiteoutAt(t, filepath.Join(upper, "gone"))
	os.Symlink("../../etc/passwd", filepath.Join(upper, "out"))
	os.Symlink("edit.txt", filepath.Join(upper, "in"))
	cs, err := Scan(upper, root, 0)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	Apply(cs, New(nil, nil), func(c Change) string { return filepath.Join(upper, c.Rel()) }, "run1", started, nil)
	outcome := map[string]string{}
	for _, c := range cs {
		outcome[c.Rel()] = c.Outcome
	}
	for rel, want := range map[string]string{
		"edit.txt": Applied, "new": Applied, "new/file.txt": Applied, "del.txt": Applied, "in": Applied,
		".git": Refused, ".git/config": Refused, "out": Refused,
		"gone/a.txt": Applied, "gone/.git/config": Refused, "gone/.git": Refused, "gone": Refused,
	} {
		if outcome[rel] != want {
			t.Errorf("%s: %q, want %q", rel, outcome[rel], want)
		}
	}
	for path, want := range map[string]string{"edit.txt": "after\n", "new/file.txt": "new\n", "gone/.git/config": "[core]\n"} {
		if got, err := os.ReadFile(filepath.Join(root, path)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, gone := range []string{"del.txt", "gone/a.txt", ".git", "out"} {
		if _, err := os.Lstat(filepath.Join(root, gone)); err == nil {
			t.Errorf("%s is on the host", gone)
		}
	}
	if target, _ := os.Readlink(filepath.Join(root, "in")); target != "edit.txt" {
		t.Errorf("link in -> %q", target)
	}
	// The staged file moved in (same file system): it is gone from the stage.
	if _, err := os.Stat(filepath.Join(upper, "edit.txt")); err == nil {
		t.Error("edit.txt was copied, not moved")
	}
}

// A file changed on the host while the run ran keeps its content; the run's
// version is put beside it. One created meanwhile is a conflict too.
func TestApplyConflict(t *testing.T) {
	root, upper := stageTree(t)
	write(t, filepath.Join(upper, "edit.txt"), "the run's\n")
	write(t, filepath.Join(upper, "both.txt"), "the run's\n")
	cs, err := Scan(upper, root, 0)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	time.Sleep(20 * time.Millisecond) // ctime granularity; not a wait for anything
	write(t, filepath.Join(root, "edit.txt"), "the user's\n")
	write(t, filepath.Join(root, "both.txt"), "the user's\n")
	Apply(cs, New(nil, nil), func(c Change) string { return filepath.Join(upper, c.Rel()) }, "r2", started, nil)
	for _, c := range cs {
		if c.Outcome != Conflict {
			t.Errorf("%s: %s (%s), want conflict", c.Rel(), c.Outcome, c.Reason)
			continue
		}
		if got, _ := os.ReadFile(c.Path); string(got) != "the user's\n" {
			t.Errorf("%s was overwritten: %q", c.Rel(), got)
		}
		if got, _ := os.ReadFile(c.KeptAt); string(got) != "the run's\n" {
			t.Errorf("%s: the run's version at %q is %q", c.Rel(), c.KeptAt, got)
		}
	}
}

func TestGitHooks(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "repo", ".git", "config"), "[core]\n\tbare = false\n[Core]\n\thooksPath = \"tools/hooks\" ; comment\n")
	write(t, filepath.Join(dir, "wt", ".git"), "gitdir: ../repo/.git/worktrees/wt\n")
	write(t, filepath.Join(dir, "repo", ".git", "worktrees", "wt", "commondir"), "../..\n")
	write(t, filepath.Join(dir, "global"), "[core]\nhooksPath = /global/hooks\n")
	write(t, filepath.Join(dir, "plain", ".git", "config"), "[user]\nname = x\n")
	hooks := GitHooks([]string{filepath.Join(dir, "global")})
	for d, want := range map[string]string{
		"repo":  filepath.Join(dir, "repo", "tools", "hooks"),
		"wt":    filepath.Join(dir, "wt", "tools", "hooks"),
		"plain": "/global/hooks",
		"none":  "",
	} {
		got := strings.Join(hooks(filepath.Join(dir, d)), ",")
		if got != want {
			t.Errorf("hooks of %s = %q, want %q", d, got, want)
		}
	}
}

func TestStoreRoundTrip(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "changes")}
	if _, err := s.Create("../x"); err == nil {
		t.Error("a run id with a slash was accepted")
	}
	stage, err := s.Create("abc123")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(stage, "0", "work", "work"), 0o000)
	m := Manifest{Run: "abc123", Skill: "s", Started: time.Now().Round(0), Changes: []Change{{Path: "/r/a", Root: "/r", Kind: Created}}}
	if err := s.Save(m); err != nil {
		t.Fatal(err)
	}
	runs, err := s.List()
	if err != nil || len(runs) != 1 || runs[0].Run != "abc123" || len(runs[0].Changes) != 1 {
		t.Fatalf("List = %+v, %v", runs, err)
	}
	if err := s.Drop("abc123"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("abc123"); err == nil {
		t.Error("dropped run still loads")
	}
}

// Drop removes a run's directory whatever its stage holds: nothing, a
// manifest beside an empty stage, or an overlay's locked work directory.
func TestDropLeavesNothing(t *testing.T) {
	for name, fill := range map[string]func(s Store, stage string){
		"empty stage":   func(Store, string) {},
		"manifest only": func(s Store, _ string) { _ = s.Save(Manifest{Run: "r1"}) },
		"overlay dirs": func(_ Store, stage string) {
			_ = os.MkdirAll(filepath.Join(stage, "0", "upper", "a"), 0o700)
			_ = os.MkdirAll(filepath.Join(stage, "0", "work", "work"), 0o000)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := Store{Dir: filepath.Join(t.TempDir(), "changes")}
			stage, err := s.Create("r1")
			if err != nil {
				t.Fatal(err)
			}
			fill(s, stage)
			if err := s.Drop("r1"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(s.Dir, "r1")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("run directory after Drop: %v, want it gone", err)
			}
		})
	}
}

// A large file staged on the tree's own file system moves in: the same
// inode, no copy (issue 34: a 100 MiB output is moved, not copied).
func TestApplyMovesLargeFile(t *testing.T) {
	root, upper := stageTree(t)
	big := filepath.Join(upper, "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, _ := os.Stat(big)
	cs, err := Scan(upper, root, 0)
	if err != nil {
		t.Fatal(err)
	}
	Apply(cs, New(nil, nil), func(c Change) string { return filepath.Join(upper, c.Rel()) }, "big", time.Now(), nil)
	after, err := os.Stat(filepath.Join(root, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != 100<<20 || after.Sys().(*syscall.Stat_t).Ino != before.Sys().(*syscall.Stat_t).Ino {
		t.Errorf("big.bin was copied, not moved (size %d)", after.Size())
	}
}
