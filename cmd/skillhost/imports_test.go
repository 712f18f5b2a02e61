package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The CLI builds on what an embedding program may use: its non-test files
// import no other package of this module than host, the subpackages of
// host meant for embedding programs (docs/go-api.md lists them) and shared
// (the contract types it prints).
func TestImportsOnlyHost(t *testing.T) {
	const module = "github.com/skillhost/skillhost"
	allowed := map[string]bool{module + "/host": true, module + "/shared": true}
	for _, sub := range []string{"catalog", "changeset", "config", "events", "grant", "match", "mcpserver", "skill", "term"} {
		allowed[module+"/host/"+sub] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if (path == module || strings.HasPrefix(path, module+"/")) && !allowed[path] {
				t.Errorf("%s imports %s; the CLI may import only host and shared (add what it needs to host)", name, path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no non-test Go files found")
	}
}
