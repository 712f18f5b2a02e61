// Package worker holds the fleet worker's container image recipe; its
// test keeps the recipe honest where no Docker daemon runs.
package worker

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line      int
	cmd, args string
}

// stage is a FROM and what follows it.
type stage struct {
	from, name string
	steps      []instruction
}

// parse reads a Dockerfile: the ARGs before the first FROM, and the
// stages. It refuses an instruction it does not know.
func parse(t *testing.T, path string) (globals map[string]string, stages []*stage) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := map[string]bool{"FROM": true, "ARG": true, "RUN": true, "COPY": true, "WORKDIR": true, "ENV": true, "USER": true,
		"ENTRYPOINT": true, "CMD": true, "EXPOSE": true, "VOLUME": true, "LABEL": true, "STOPSIGNAL": true}
	globals = map[string]string{}
	sc := bufio.NewScanner(f)
	var pending string
	start, n := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if pending == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if pending == "" {
			start = n
		}
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		full := pending + line
		pending = ""
		cmd, args, _ := strings.Cut(full, " ")
		cmd = strings.ToUpper(cmd)
		if !known[cmd] {
			t.Fatalf("%s:%d: unknown instruction %s", path, start, cmd)
		}
		in := instruction{start, cmd, strings.TrimSpace(args)}
		switch {
		case cmd == "FROM":
			from, name, _ := strings.Cut(in.args, " AS ")
			stages = append(stages, &stage{from: strings.TrimSpace(from), name: strings.TrimSpace(name)})
		case len(stages) == 0 && cmd == "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			globals[k] = v
		case len(stages) == 0:
			t.Fatalf("%s:%d: %s before the first FROM", path, start, cmd)
		default:
			stages[len(stages)-1].steps = append(stages[len(stages)-1].steps, in)
		}
	}
	if pending != "" {
		t.Fatalf("%s: ends inside a continued line", path)
	}
	return globals, stages
}

// expand replaces ${NAME} and $NAME from vars.
func expand(s string, vars map[string]string) string {
	return os.Expand(s, func(k string) string { return vars[k] })
}

// The recipe: a Go build stage whose Go is the module's, and a final
// stage holding the two binaries from it, packages Debian has, and an
// entry point that is the worker with flags it knows.
func TestRecipe(t *testing.T) {
	globals, stages := parse(t, "Dockerfile")
	if len(stages) != 2 || stages[0].name != "build" || stages[1].name != "worker" {
		t.Fatalf("want the stages build and worker, got %d", len(stages))
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(mod))
	if goLine == nil || globals["GO_VERSION"] != goLine[1] {
		t.Errorf("GO_VERSION %q, go.mod says go %v", globals["GO_VERSION"], goLine)
	}
	if got := expand(stages[0].from, globals); got != "golang:"+goLine[1]+"-bookworm" {
		t.Errorf("build stage FROM %s", got)
	}
	if got := expand(stages[1].from, globals); got != "debian:bookworm-slim" {
		t.Errorf("worker stage FROM %s", got)
	}
	var copied []string
	var entry []string
	for _, in := range stages[1].steps {
		switch in.cmd {
		case "COPY":
			f := strings.Fields(in.args)
			if f[0] != "--from=build" {
				t.Errorf("Dockerfile:%d: the worker stage copies only from the build stage: %s", in.line, in.args)
				continue
			}
			for _, src := range f[1 : len(f)-1] {
				copied = append(copied, f[len(f)-1]+filepath.Base(src))
			}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &entry); err != nil {
				t.Errorf("Dockerfile:%d: ENTRYPOINT is not a JSON array: %v", in.line, err)
			}
		case "RUN":
			checkPackages(t, in)
		}
	}
	want := []string{"/usr/local/lib/skillhost/skillhost-sandbox-temporal", "/usr/local/lib/skillhost/skillhost-sandbox-landlock", "/usr/local/lib/skillhost/skillhost-supervisor-landlock"}
	if strings.Join(copied, " ") != strings.Join(want, " ") {
		t.Errorf("the worker stage holds %v, want %v", copied, want)
	}
	if len(entry) < 2 || entry[0] != want[0] || entry[1] != "worker" {
		t.Errorf("ENTRYPOINT %v is not the worker", entry)
	}
}

// checkPackages: what an apt-get install of the final stage names is a
// package of this Debian (when apt-cache is here to say).
func checkPackages(t *testing.T, in instruction) {
	t.Helper()
	_, rest, ok := strings.Cut(in.args, "apt-get install")
	if !ok {
		return
	}
	rest, _, _ = strings.Cut(rest, "&&")
	if _, err := exec.LookPath("apt-cache"); err != nil {
		t.Log("no apt-cache here: the packages are not checked")
		return
	}
	for _, p := range strings.Fields(rest) {
		if strings.HasPrefix(p, "-") {
			continue
		}
		if out, err := exec.Command("apt-cache", "show", "--no-all-versions", p).CombinedOutput(); err != nil {
			t.Errorf("Dockerfile:%d: apt-get install %s: no such package here: %v %s", in.line, p, err, out)
		}
	}
}

// The build stage's commands, run as a script in a directory of their
// own that holds the build context (OUT, the stage's build argument,
// points into it instead of /out); then the worker built takes the
// entry point's flags.
func TestBuildStage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker and the plugin from a copy of the repository")
	}
	globals, stages := parse(t, "Dockerfile")
	root := t.TempDir()
	vars := map[string]string{}
	for k, v := range globals {
		vars[k] = v
	}
	vars["OUT"] = filepath.Join(root, "out")
	workdir := root
	ignored := dockerignore(t)
	for _, in := range stages[0].steps {
		switch in.cmd {
		case "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			if _, set := vars[k]; !set {
				vars[k] = v
			}
		case "WORKDIR":
			workdir = filepath.Join(root, expand(in.args, vars))
			if err := os.MkdirAll(workdir, 0o755); err != nil {
				t.Fatal(err)
			}
		case "COPY":
			f := strings.Fields(in.args)
			for _, src := range f[:len(f)-1] {
				copyContext(t, filepath.Join("../..", src), filepath.Join(workdir, f[len(f)-1], filepath.Base(src)), src == ".", ignored)
			}
		case "RUN":
			cmd := exec.Command("/bin/sh", "-c", in.args)
			cmd.Dir = workdir
			cmd.Env = os.Environ()
			for k, v := range vars {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("Dockerfile:%d: RUN %s: %v\n%s", in.line, in.args, err, out)
			}
		default:
			t.Fatalf("Dockerfile:%d: the test does not play %s", in.line, in.cmd)
		}
	}
	_, last := parse(t, "Dockerfile")
	for _, in := range last[1].steps {
		if in.cmd != "ENTRYPOINT" {
			continue
		}
		var entry []string
		json.Unmarshal([]byte(in.args), &entry)
		// Flags parse in order: -h after them all stops before the worker
		// starts, having refused any it does not know.
		out, _ := exec.Command(filepath.Join(vars["OUT"], filepath.Base(entry[0])), append(entry[1:], "-h")...).CombinedOutput()
		if strings.Contains(string(out), "flag provided but not defined") || !strings.Contains(string(out), "-metrics") {
			t.Errorf("the entry point's flags: %s", out)
		}
	}
}

// dockerignore reads the patterns of Dockerfile.dockerignore (each a
// path relative to the context).
func dockerignore(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out
}

// copyContext copies src to dst as COPY would: a directory's tree (the
// context, with the ignored paths left out), or a file.
func copyContext(t *testing.T, src, dst string, context bool, ignored map[string]bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if context && (ignored[filepath.ToSlash(rel)] || strings.HasSuffix(p, ".test")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if !context {
			target = dst
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, _ := d.Info()
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("COPY %s: %v", src, err)
	}
}
