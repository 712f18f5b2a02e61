// Package archtest checks the direction of the project's dependencies:
// cmd → host → shared ← plugins, and the SDK's split by audience.
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/skillhost/skillhost/"

// deps lists the project packages that pattern's packages import, directly
// or not, keyed by importer.
func deps(t *testing.T, pattern string) map[string][]string { return listed(t, pattern, ".Deps") }

// listed runs go list over pattern and keeps, of each package's field (a
// list of import paths), the project's packages.
func listed(t *testing.T, pattern, field string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join `+field+` " "}}`, pattern).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pattern, err, out)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, d := range fields[1:] {
			if strings.HasPrefix(d, module) {
				got[fields[0]] = append(got[fields[0]], strings.TrimPrefix(d, module))
			}
		}
	}
	return got
}

func TestDependencyDirection(t *testing.T) {
	rules := []struct {
		pattern string
		allowed func(dep string) bool
		why     string
	}{
		{"../../shared/...", func(d string) bool { return strings.HasPrefix(d, "shared") },
			"the SDK imports nothing of the project"},
		{"../../plugins/...", func(d string) bool { return strings.HasPrefix(d, "shared") || strings.HasPrefix(d, "plugins/") },
			"a backend builds on the SDK alone"},
		{"../../host/...", func(d string) bool { return !strings.HasPrefix(d, "plugins/") && !strings.HasPrefix(d, "cmd/") },
			"the host never imports a backend or the CLI"},
		{"../../shared/backend", func(d string) bool { return !strings.HasPrefix(d, "shared/pluginclient") },
			"a plugin binary does not carry the host's client"},
		{"../../shared/pluginclient", func(d string) bool {
			return !strings.HasPrefix(d, "shared/backend") && !strings.HasPrefix(d, "shared/runner")
		},
			"a host does not carry the plugin side"},
	}
	for _, r := range rules {
		for pkg, ds := range deps(t, r.pattern) {
			for _, d := range ds {
				if !r.allowed(d) {
					t.Errorf("%s imports %s: %s", strings.TrimPrefix(pkg, module), d, r.why)
				}
			}
		}
	}
}

// imports lists the project packages that pattern's packages import
// directly, keyed by importer.
func imports(t *testing.T, pattern string) map[string][]string { return listed(t, pattern, ".Imports") }

// The host is a host: it never carries the plugin author's SDK, and only
// host/internal/sandbox, whose in-process strategy runs scripts without a plugin,
// uses the supervised runner.
func TestHostUsesNoPluginSDK(t *testing.T) {
	for pkg, ds := range deps(t, "../../host/...") {
		for _, d := range ds {
			if d == "shared/backend" {
				t.Errorf("%s imports %s: the host does not carry the plugin author's SDK", strings.TrimPrefix(pkg, module), d)
			}
		}
	}
	for pkg, ds := range imports(t, "../../host/...") {
		for _, d := range ds {
			if d == "shared/runner" && strings.TrimPrefix(pkg, module) != "host/internal/sandbox" {
				t.Errorf("%s imports %s: only host/internal/sandbox's in-process strategy runs scripts itself", strings.TrimPrefix(pkg, module), d)
			}
		}
	}
}

// The skillhost binary starts for every one-shot run, and each package it
// links runs its initialisers then: it leaves out what only plugins need
// (the egress proxy, whose goproxy parses a CA key at start) and what one
// page can write by hand.
func TestCLILeavesOutHeavyDeps(t *testing.T) {
	banned := []struct{ prefix, why string }{
		{module + "shared/egress/proxy", "the egress proxy runs in plugins only"},
		{"github.com/elazarl/goproxy", "the egress proxy runs in plugins only"},
		{"github.com/things-go/go-socks5", "the egress proxy runs in plugins only"},
		{"github.com/prometheus", "host/mcpserver writes its /metrics in the text format itself"},
		{"github.com/klauspost/compress", "it came with client_golang's promhttp"},
		{"runtime/metrics", "its initialiser describes every runtime metric; /metrics reads what it needs otherwise"},
	}
	out, err := exec.Command("go", "list", "-deps", "../../cmd/skillhost").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps cmd/skillhost: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			if dep == b.prefix || strings.HasPrefix(dep, b.prefix+"/") {
				t.Errorf("cmd/skillhost links %s: %s", dep, b.why)
			}
		}
	}
}

// maxFuncLines is the longest a function may be: past that, a newcomer
// cannot hold it in mind, and it usually does several things.
const maxFuncLines = 100

// No function of the project, generated code aside, is longer than
// maxFuncLines lines.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".pb.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines long; split it (at most %d)", strings.TrimPrefix(p, "../../"), fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
