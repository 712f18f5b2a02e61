package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxHostNames bounds package host's public face: what an embedding
// program reads in `go doc ./host`.
const maxHostNames = 60

// Package host exports at most maxHostNames names (each constant of a group
// counted), every one with a doc comment, and no alias of another
// package's type: embedding programs use the subpackages by their own
// names.
func TestHostPublicFace(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../../host", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				names = append(names, exported(t, fset, d)...)
			}
		}
	}
	if len(names) > maxHostNames {
		t.Errorf("package host exports %d names, more than %d: %v", len(names), maxHostNames, names)
	}
}

// exported returns d's exported top-level names, reporting those without
// a doc comment and type aliases.
func exported(t *testing.T, fset *token.FileSet, d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil && d.Name.IsExported() {
			names = append(names, d.Name.Name)
			if d.Doc == nil {
				t.Errorf("%s: %s has no doc comment", fset.Position(d.Pos()), d.Name.Name)
			}
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() {
					continue
				}
				names = append(names, s.Name.Name)
				if d.Doc == nil && s.Doc == nil {
					t.Errorf("%s: %s has no doc comment", fset.Position(s.Pos()), s.Name.Name)
				}
				if s.Assign.IsValid() {
					t.Errorf("%s: %s is an alias; export the subpackage's type by its own name", fset.Position(s.Pos()), s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						names = append(names, n.Name)
						if d.Doc == nil && s.Doc == nil && s.Comment == nil {
							t.Errorf("%s: %s has no doc comment", fset.Position(n.Pos()), n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// maxDocLines bounds each page under docs/: a reader's page, not a lab
// notebook (those live beside their tools).
const maxDocLines = 600

func TestDocsStayPages(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs found: %v", err)
	}
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n > maxDocLines {
			t.Errorf("%s is %d lines; at most %d (move what a reader does not need next to its tool)", strings.TrimPrefix(p, "../../"), n, maxDocLines)
		}
	}
}
