package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/internal/shellwords"
)

// docBlock is a fenced block of a Markdown page.
type docBlock struct {
	file, lang, text string
	line             int
}

// docPages are the README and the reference under docs/, without the
// generated ones.
func docPages(t *testing.T) []string {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = slices.DeleteFunc(pages, func(p string) bool {
		b := filepath.Base(p)
		return b == "benchmarks.md" || b == "matching-defaults.md"
	})
	return append([]string{"../../README.md"}, pages...)
}

var fence = regexp.MustCompile("(?m)^```([a-z]*)\n")

func blocks(t *testing.T, page string) []docBlock {
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	var out []docBlock
	for {
		m := fence.FindStringSubmatchIndex(text)
		if m == nil {
			return out
		}
		end := strings.Index(text[m[1]:], "\n```")
		if end < 0 {
			t.Fatalf("%s: an unclosed code block", page)
		}
		line := strings.Count(string(data[:len(data)-len(text)+m[0]]), "\n") + 1
		out = append(out, docBlock{file: filepath.Base(page), lang: text[m[2]:m[3]], text: text[m[1] : m[1]+end+1], line: line})
		text = text[m[1]+end+4:]
	}
}

var configKey = regexp.MustCompile(`^(skills|scripts|sandbox|plugins|match|mcp):`)

// TestDocs checks every example of the README and docs/ that a program can
// check: configuration blocks load, JSON blocks parse, every skillhost
// command line names a real command with real flags, the quick start's
// commands run against the example skills, and Go snippets compile.
func TestDocs(t *testing.T) {
	pluginDir := plugins(t)
	var configs, commands, ran, snippets int
	for _, page := range docPages(t) {
		for _, b := range blocks(t, page) {
			at := fmt.Sprintf("%s:%d", b.file, b.line)
			switch {
			case b.lang == "yaml" && configKey.MatchString(firstLine(b.text)):
				configs++
				p := filepath.Join(t.TempDir(), "config.yaml")
				os.WriteFile(p, []byte(b.text), 0o644)
				if _, err := config.Load(p); err != nil {
					t.Errorf("%s: the configuration does not load: %v", at, err)
				}
			case b.lang == "json":
				if !json.Valid([]byte(b.text)) {
					t.Errorf("%s: not valid JSON", at)
				}
			case b.lang == "go":
				snippets++
				compileSnippet(t, at, b.text)
			default:
				for _, line := range strings.Split(b.text, "\n") {
					args, runnable := commandLine(line)
					if args == nil {
						continue
					}
					commands++
					if code, out := runCLI(t, helpArgs(args), pluginDir); code != 0 {
						t.Errorf("%s: %q is not a command with those flags (exit %d):\n%s", at, line, code, out)
					}
					if runnable {
						ran++
						if code, out := runCLI(t, args, pluginDir); code != 0 {
							t.Errorf("%s: %q exited %d:\n%s", at, line, code, out)
						}
					}
				}
			}
		}
	}
	t.Logf("%d configurations loaded, %d command lines checked (%d run), %d Go snippets compiled", configs, commands, ran, snippets)
	if configs < 4 || commands < 8 || ran < 4 || snippets < 5 {
		t.Errorf("too few examples found: the page layout the test reads has changed")
	}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

// commandLine reads a skillhost command line from a shell block: its
// arguments (without the program), and whether it runs as written (the
// quick start's, against the example skills' configuration).
func commandLine(line string) ([]string, bool) {
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	var prog string
	for _, p := range []string{"bin/skillhost ", "skillhost "} {
		if strings.HasPrefix(line, p) {
			prog = p
		}
	}
	if prog == "" || strings.ContainsAny(line, "|<>$`") {
		return nil, false
	}
	args, err := shellwords.Split(strings.TrimPrefix(line, prog))
	if err != nil || len(args) == 0 {
		return nil, false
	}
	return args, prog == "bin/skillhost " && strings.HasPrefix(line, "bin/skillhost --config examples/skillhost.yaml ")
}

// helpArgs asks for the command's help, before any "--": it parses the
// command and its flags without running it.
func helpArgs(args []string) []string {
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[:i]
	}
	return append(slices.Clone(args), "--help")
}

// runCLI runs the CLI in a child process from the repository's root.
func runCLI(t *testing.T, args []string, pluginDir string) (int, string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+pluginDir, "XDG_CONFIG_HOME="+t.TempDir(), envRunCLI+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

// envRunCLI makes the test binary act as the skillhost CLI (TestMain).
const envRunCLI = "SKILLHOST_TEST_RUN_CLI"

// snippetImports are the packages a snippet may use without importing
// them, by the name it uses.
var snippetImports = map[string]string{
	"context": "context", "fmt": "fmt", "log": "log", "os": "os", "testing": "testing", "runtime": "runtime",
	"host": "github.com/skillhost/skillhost/host", "events": "github.com/skillhost/skillhost/host/events",
	"shared": "github.com/skillhost/skillhost/shared", "backend": "github.com/skillhost/skillhost/shared/backend",
	"conformance": "github.com/skillhost/skillhost/shared/conformance", "pluginclient": "github.com/skillhost/skillhost/shared/pluginclient",
}

// compileSnippet builds a Go snippet as a file of internal/doccheck: a
// whole file (its package clause replaced) when it starts with "package",
// declarations when it starts with "func", else the body of a function
// with ctx and userMessage in scope; the packages of snippetImports it uses
// are imported for it.
func compileSnippet(t *testing.T, at, code string) {
	var src string
	switch {
	case strings.HasPrefix(code, "package "):
		src = "package doccheck" + code[strings.Index(code, "\n"):]
	default:
		body := code
		if !strings.HasPrefix(code, "func ") {
			body = "func snippet(ctx context.Context, userMessage string) {\n" + code + "\n}\n"
		}
		var imports []string
		for name, path := range snippetImports {
			if strings.Contains(body, name+".") {
				imports = append(imports, fmt.Sprintf("%q", path))
			}
		}
		slices.Sort(imports)
		src = "package doccheck\n\nimport (\n" + strings.Join(imports, "\n") + "\n)\n\n" + body
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "snippet.go")
	os.WriteFile(file, []byte(src), 0o644)
	root, _ := filepath.Abs("../../internal/doccheck")
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(root, "snippet.go"): file}})
	os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644)
	cmd := exec.Command("go", "vet", "-overlay", filepath.Join(dir, "overlay.json"), "./internal/doccheck")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: the Go snippet does not compile: %v\n%s\n%s", at, err, out, src)
	}
}

// docs/go-api.md shows a whole program (issue 35): its imports, a context,
// and Options.PluginDirs for a program whose plugins are not beside it;
// TestDocs compiles it.
func TestGoAPIPageHasAProgram(t *testing.T) {
	for _, b := range blocks(t, "../../docs/go-api.md") {
		if b.lang != "go" || !strings.HasPrefix(b.text, "package main\n") {
			continue
		}
		for _, want := range []string{"import (", "context.", "PluginDirs:", "func main()", "defer h.Close()"} {
			if !strings.Contains(b.text, want) {
				t.Errorf("docs/go-api.md:%d: the program lacks %q", b.line, want)
			}
		}
		compileSnippet(t, "go-api.md:"+fmt.Sprint(b.line), b.text)
		return
	}
	t.Error("docs/go-api.md shows no whole program (a go block starting with package main)")
}
