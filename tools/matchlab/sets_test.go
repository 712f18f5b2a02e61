package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/matching-defaults.md")

// The docs quote the defaults from one generated table: it must be what
// the code says.
func TestDefaultsTableIsCurrent(t *testing.T) {
	const path = "../../docs/matching-defaults.md"
	got := defaultsTable()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s is not what match.DefaultLexicalOptions gives; run go test ./tools/matchlab -update", path)
	}
	for _, row := range []string{"| threshold (`match.DefaultLexicalThreshold`) | 0.18125 |", "| Semantic | 4.1 |", "| BreadthCache | none |"} {
		if !strings.Contains(got, row) {
			t.Errorf("the table has no row %q", row)
		}
	}
}

func TestReadFloors(t *testing.T) {
	floors, err := readFloors()
	if err != nil {
		t.Fatal(err)
	}
	if len(floors) < 50 || floors[0].set != "match/labelled.jsonl" {
		t.Fatalf("%d sets, first %+v", len(floors), floors[0])
	}
	for _, f := range floors {
		if _, err := readLabelsFile(f.path); err != nil {
			t.Errorf("%s: %v", f.set, err)
		}
	}
}
