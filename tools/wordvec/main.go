// Command wordvec builds the word-vector table of the lexical matcher's
// semantic factor (host/match/wordvec.bin) from a collection of skills.
//
//	go run ./tools/wordvec -o host/match/wordvec.bin [flags] DIR...
//
// It reads every SKILL.md under the DIRs in path order, keeps the first
// skill of each name (forks and copies would otherwise count many times),
// and learns vectors from each skill's name, description and body (other
// front-matter fields are left out: registries add their own).
//
// With -tune it then tunes the table on messages labelled with the skills
// they are for (see tune.go and match.WordVectors.Tune); -base starts from
// an existing table instead of building one.
//
//	go run ./tools/wordvec -everyday host/match/everyday.tsv -tune FILE...
//
// learns the everyday-question classifier (match.TrainEveryday) from the
// labelled messages alone: those labelled with no skill are the everyday
// ones. It reads no skills. docs/matching.md names the
// collection, the labelled messages and the exact command the built-in
// table came from.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/match"
)

func main() {
	out := flag.String("o", "", "write the table to this file (required)")
	cut := flag.String("cut", "", "drop each SKILL.md from the first line that starts with this text (a registry's footer)")
	var exclude []string
	flag.Func("exclude", "leave out skills of the same name as those in this directory (repeatable): keeps an evaluation catalog out of the corpus", func(dir string) error {
		names, err := skillNames(dir)
		exclude = append(exclude, names...)
		return err
	})
	excludeNames := flag.String("exclude-names", "", "comma-separated skill names to leave out")
	var o match.WordVectorOptions
	flag.IntVar(&o.Words, "words", 0, "words in the table (0: 30000)")
	flag.IntVar(&o.Dim, "dim", 0, "dimensions (0: 100)")
	base := flag.String("base", "", "start from this table instead of building one from the DIRs")
	var tuneFiles []string
	flag.Func("tune", "tune the table with the labelled messages in this JSONL file (repeatable; see tune.go)", func(f string) error {
		tuneFiles = append(tuneFiles, f)
		return nil
	})
	everyday := flag.String("everyday", "", "write the everyday-question classifier learned from the -tune messages to this file, and build no table")
	background := flag.String("background", "", "write the breadth factor's background messages, a sample of the -tune messages written for a skill, to this file, and build no table")
	examples := flag.String("examples", "", "write the example requests the matcher lends, the -tune messages written for a skill and not in the background, with the vectors of their skills in the registry checkout DIR, to this file, and build no table")
	flag.Parse()
	var err error
	switch {
	case *examples != "":
		if flag.NArg() != 1 {
			fmt.Fprintln(os.Stderr, "usage: wordvec -examples FILE [-cut TEXT] -tune FILE... DIR")
			os.Exit(2)
		}
		err = writeExamples(*examples, flag.Arg(0), *cut, tuneFiles)
	case *background != "":
		err = writeBackground(*background, tuneFiles)
	case *everyday != "":
		err = writeEveryday(*everyday, tuneFiles)
	default:
		if *out == "" || flag.NArg() == 0 || *base != "" && len(tuneFiles) == 0 {
			fmt.Fprintln(os.Stderr, "usage: wordvec -o FILE [-base TABLE -tune FILE...] [flags] DIR...")
			flag.PrintDefaults()
			os.Exit(2)
		}
		skip := map[string]bool{}
		for _, n := range append(exclude, strings.Split(*excludeNames, ",")...) {
			if n = strings.TrimSpace(n); n != "" {
				skip[strings.ToLower(n)] = true
			}
		}
		err = buildTable(tableJob{out: *out, base: *base, cut: *cut, dirs: flag.Args(), tuneFiles: tuneFiles, skip: skip, opts: o})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wordvec:", err)
		os.Exit(1)
	}
}

// tableJob is what building a table needs.
type tableJob struct {
	out, base, cut  string
	dirs, tuneFiles []string
	skip            map[string]bool // names (lower case) left out of the corpus
	opts            match.WordVectorOptions
}

// corpus walks the SKILL.md files under the job's directories, once, and
// counts what it read.
type corpus struct {
	job             tableJob
	tuning          bool
	kept            skillSet // the kept skills, when tuning
	read, used, bad int
	err             error
}

// docs yields each kept skill's text; a name seen before is left out.
func (c *corpus) docs(yield func(string) bool) {
	for _, dir := range c.job.dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "SKILL.md" {
				return err
			}
			c.read++
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			doc, ok := skillDoc(data, c.job.cut)
			if !ok {
				c.bad++
				return nil
			}
			name := docName(doc)
			if c.job.skip[name] {
				return nil
			}
			c.job.skip[name] = true
			c.used++
			if c.tuning {
				rel, _ := filepath.Rel(dir, filepath.Dir(path))
				c.kept.add(rel, doc)
			}
			if !yield(docText(doc)) {
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			c.err = fmt.Errorf("%s: %w", dir, err)
			return
		}
	}
}

// buildTable builds (or reads) a table, tunes it when asked, and writes it.
func buildTable(job tableJob) error {
	// The labels are read first: a mistake in them should not wait for
	// the minutes the corpus takes.
	labels, err := readLabels(job.tuneFiles)
	if err != nil {
		return err
	}
	c := &corpus{job: job, tuning: len(labels) > 0}
	var w *match.WordVectors
	if job.base != "" {
		if w, err = readTable(job.base); err == nil {
			c.docs(func(string) bool { return true }) // only the corpus
		}
	} else {
		w, err = match.BuildWordVectors(iter.Seq[string](c.docs), job.opts)
	}
	if err == nil {
		err = c.err
	}
	if err == nil && len(labels) > 0 {
		w, err = tune(w, &c.kept, labels, job.dirs, job.cut)
	}
	if err != nil {
		return err
	}
	if err := writeFile(job.out, w); err != nil {
		return err
	}
	learned := "learned from"
	if job.base != "" {
		learned = "tuned " + job.base + " against"
	}
	fmt.Fprintf(os.Stderr, "wordvec: read %d SKILL.md files, %d without a readable name, %s %d", c.read, c.bad, learned, c.used)
	if len(labels) > 0 {
		fmt.Fprintf(os.Stderr, " with %d labelled messages", len(labels))
	}
	fmt.Fprintf(os.Stderr, "; %d words of %d dimensions to %s\n", w.Len(), w.Dim(), job.out)
	return nil
}

// docName is a skill's name as the corpus compares names: lower case.
func docName(d match.Doc) string { return strings.ToLower(strings.TrimSpace(d.Name)) }

// docText is the text a skill adds to the corpus.
func docText(d match.Doc) string { return d.Name + "\n" + d.Description + "\n" + d.Body }

// skillDoc returns a SKILL.md's name, description and body, or false if it
// has no front matter with a name. It is not skill.Parse on purpose: that
// refuses 9,390 of the registry's 61,452 files (front matter its repairs
// cannot make YAML, a missing description), and a corpus only needs the
// words.
func skillDoc(data []byte, cut string) (match.Doc, bool) {
	if cut != "" {
		if i := bytes.Index(data, []byte("\n"+cut)); i >= 0 {
			data = data[:i]
		}
	}
	rest, ok := bytes.CutPrefix(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("---\n"))
	if !ok {
		return match.Doc{}, false
	}
	head, body, ok := bytes.Cut(rest, []byte("\n---"))
	if !ok {
		return match.Doc{}, false
	}
	var fm struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}
	if yaml.Unmarshal(head, &fm) != nil {
		// Many published skills have front matter that is not valid YAML,
		// most often an unquoted colon in the description; take the two
		// fields line by line, as lenient readers do.
		fm.Name, fm.Description = "", ""
		for _, line := range strings.Split(string(head), "\n") {
			if v, ok := strings.CutPrefix(line, "name:"); ok && fm.Name == "" {
				fm.Name = strings.Trim(strings.TrimSpace(v), `"'`)
			} else if v, ok := strings.CutPrefix(line, "description:"); ok && fm.Description == "" {
				fm.Description = strings.TrimSpace(v)
			}
		}
	}
	if strings.TrimSpace(fm.Name) == "" {
		return match.Doc{}, false
	}
	return match.Doc{Name: fm.Name, Description: fm.Description, Body: string(body)}, true
}

// skillNames lists the names of the skills in dir: its subfolders' names
// and the names in their SKILL.md files.
func skillNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		names = append(names, e.Name())
		if data, err := os.ReadFile(filepath.Join(dir, e.Name(), "SKILL.md")); err == nil {
			if d, ok := skillDoc(data, ""); ok {
				names = append(names, docName(d))
			}
		}
	}
	return names, nil
}

// writeFile writes a table to path, reporting a failed close too: a full
// disk shows there.
func writeFile(path string, table io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = table.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
