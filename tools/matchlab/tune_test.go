package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/internal/matchtext"
	"github.com/skillhost/skillhost/internal/testskill"
)

func TestTuneReadsLabels(t *testing.T) {
	dir := t.TempDir()
	testskill.Add(t, dir, "a--containers", testskill.Skill{Name: "containers", Description: "docker container image", Body: "dockerfile compose volume\n"})
	testskill.Add(t, dir, "b--payments", testskill.Skill{Name: "payments", Description: "invoice refund payment", Body: "charge billing card\n"})
	testskill.Add(t, dir, "c--payments", testskill.Skill{Name: "payments", Description: "a copy under the same name", Body: "invoice\n"})
	// A corpus of two topics, with enough words for a table.
	topics := [2][]string{
		strings.Fields("docker container image dockerfile compose volume registry layer kubernetes pod cluster node build push pull tag mount network port host"),
		strings.Fields("invoice refund payment charge billing card receipt tax currency dispute customer subscription plan price discount coupon order cart checkout ledger"),
	}
	var texts []string
	for i := range 40 {
		var b strings.Builder
		for j := range 30 {
			b.WriteString(topics[i%2][(i*7+j)%20] + " ")
		}
		texts = append(texts, b.String())
	}
	w, err := buildVectors(slices.Values(texts), vectorOptions{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	var corpus skillSet
	for _, f := range []string{"a--containers", "b--payments", "b--payments"} { // the same folder twice, as under two DIRs
		data, _ := os.ReadFile(filepath.Join(dir, f, "SKILL.md"))
		d, _ := skillDoc(data, "")
		corpus.add(f, d)
	}
	if len(corpus.docs) != 2 {
		t.Fatalf("a folder added twice gave %d skills, want 2", len(corpus.docs))
	}
	labels := filepath.Join(t.TempDir(), "labels.jsonl")
	write := func(s string) {
		if err := os.WriteFile(labels, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A skill the corpus left out (a second "payments") is read from its folder.
	write(`{"message": "my docker image will not build", "skill": "a--containers"}` + "\n" +
		`{"message": "refund a charge", "skill": "c--payments"}` + "\n" +
		`{"message": "a recipe for bread", "skill": null}` + "\n")
	read, err := readLabels([]string{labels})
	if err != nil || len(read) != 3 || read[0].folder != "a--containers" || read[2].folder != "" || read[1].where != labels+":2" {
		t.Fatalf("readLabels = %+v, %v", read, err)
	}
	if _, err := tune(w, &corpus, read, []string{dir}, ""); err != nil {
		t.Fatal(err)
	}
	if len(corpus.docs) != 3 || corpus.docs[2].Description != "a copy under the same name" {
		t.Errorf("corpus after tuning: %+v", corpus.docs)
	}
	for _, c := range []struct{ labels, want string }{
		{`{"message": "x", "skill": "missing"}`, `labels.jsonl:1: skill "missing": no SKILL.md`},
		{"{\"message\": \"x\", \"skill\": null}\nnot json\n", `labels.jsonl:2: want {"message"`},
		{`{"skill": null}`, `labels.jsonl:1: want {"message"`},
		{`{"message": "x", "skill": ""}`, `labels.jsonl:1: want {"message"`},
		{`{"message": "` + strings.Repeat("x", 1<<20) + `"}`, `labels.jsonl:1: bufio.Scanner: token too long`},
	} {
		write(c.labels + "\n")
		read, err := readLabels([]string{labels})
		if err == nil {
			_, err = tune(w, &corpus, read, []string{dir}, "")
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("labels %.60q: error %.200v, want one containing %q", c.labels, err, c.want)
		}
	}
	if _, err := readLabels([]string{filepath.Join(dir, "none.jsonl")}); err == nil {
		t.Error("a missing labels file gave no error")
	}
}

func TestWriteEveryday(t *testing.T) {
	dir := t.TempDir()
	labels := filepath.Join(dir, "labels.jsonl")
	var b strings.Builder
	for range 5 {
		b.WriteString(`{"message": "my landlord kept my deposit", "skill": null}` + "\n")
		b.WriteString(`{"message": "the docker image build is slow", "skill": "a--containers"}` + "\n")
	}
	if err := os.WriteFile(labels, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "everyday.tsv")
	if err := writeEveryday(out, []string{labels}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := matchtext.ReadEveryday(f)
	if err != nil {
		t.Fatal(err)
	}
	if p, q := m.Probability("my landlord"), m.Probability("docker build"); p <= 0.5 || q >= 0.5 {
		t.Errorf("learned %.3f for the everyday message and %.3f for the other", p, q)
	}
	if err := writeEveryday(out, nil); err == nil || !strings.Contains(err.Error(), "at least one FILE") {
		t.Errorf("with no labels: %v, want an error asking for a FILE", err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"message\": \"\"}\n"), 0o644)
	if err := writeEveryday(out, []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.jsonl:1") {
		t.Errorf("with a bad line: %v, want an error naming bad.jsonl:1", err)
	}
}

// The classifier and the background messages built into the binary are
// what the committed messages give, byte for byte: both can be rebuilt and
// checked.
func TestEverydayTableIsReproducible(t *testing.T) {
	checkReproducible(t, writeEveryday, "everyday", "../../internal/matchtext/everyday.tsv")
}

func TestBackgroundIsReproducible(t *testing.T) {
	checkReproducible(t, writeBackground, "background", "../../internal/matchtext/background.txt")
}

// checkReproducible runs write on tune/batch*.jsonl and compares what it
// writes with the committed file.
func checkReproducible(t *testing.T, write func(path string, files []string) error, flag, committed string) {
	t.Helper()
	files, err := filepath.Glob("tune/batch*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tune files: %v", err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(committed))
	if err := write(out, files); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("matchlab %s on tune/batch*.jsonl does not give %s; rebuild it with the command in tools/matchlab/tune/README.md", flag, strings.TrimPrefix(committed, "../../"))
	}
}
