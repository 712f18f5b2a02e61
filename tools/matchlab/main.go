// Command matchlab is the matcher's laboratory: it learns, offline, the
// data files internal/matchtext embeds and fits the matcher's strengths. Nothing
// of it is in the product. Each subcommand reads files and writes one:
//
//	matchlab vectors -o internal/matchtext/wordvec.bin [-base TABLE] [-tune FILE]... [flags] DIR...
//	matchlab everyday -o internal/matchtext/everyday.tsv FILE...
//	matchlab background -o internal/matchtext/background.txt FILE...
//	matchlab examples -o internal/matchtext/examples.txt [-cut TEXT] DIR FILE...
//	matchlab fit
//	matchlab defaults -o docs/matching-defaults.md
//
// vectors reads every SKILL.md under the DIRs in path order, keeps the
// first skill of each name (forks and copies would otherwise count many
// times), learns word vectors from each skill's name, description and
// body, and with -tune then tunes them on messages labelled with the
// skills they are for (tunevectors.go). everyday, background and examples
// read only the labelled messages (FILE, in tune/). fit repeats the joint
// fit of the factors' strengths on the scored sets and compares it with
// the defaults; defaults writes the table of the defaults the docs quote.
// NOTEBOOK.md ("The word vectors") names the corpus and the command that
// built the table; tune/README.md has the commands of the other three.
package main

import (
	"bytes"
	"errors"
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
	"github.com/skillhost/skillhost/internal/matchtext"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	fl := flag.NewFlagSet("matchlab "+cmd, flag.ExitOnError)
	out := fl.String("o", "", "write to this file")
	var err error
	switch cmd {
	case "vectors":
		err = vectorsCommand(fl, out, args)
	case "everyday", "background":
		fl.Parse(args)
		write := writeEveryday
		if cmd == "background" {
			write = writeBackground
		}
		err = needOut(out, func() error { return write(*out, fl.Args()) })
	case "examples":
		cut := fl.String("cut", "", "drop each SKILL.md from the first line that starts with this text (a registry's footer)")
		fl.Parse(args)
		if fl.NArg() < 2 {
			usage()
		}
		err = needOut(out, func() error { return writeExamples(*out, fl.Arg(0), *cut, fl.Args()[1:]) })
	case "fit":
		fl.Parse(args)
		err = fitCommand(os.Stdout)
	case "defaults":
		fl.Parse(args)
		err = needOut(out, func() error { return os.WriteFile(*out, []byte(defaultsTable()), 0o644) })
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "matchlab:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: matchlab vectors|everyday|background|examples|fit|defaults [flags] (see go doc ./tools/matchlab)")
	os.Exit(2)
}

// needOut runs write when -o was given.
func needOut(out *string, write func() error) error {
	if *out == "" {
		return errors.New("-o FILE is required")
	}
	return write()
}

// vectorsCommand builds (or reads) a table, tunes it when asked, and
// writes it.
func vectorsCommand(fl *flag.FlagSet, out *string, args []string) error {
	cut := fl.String("cut", "", "drop each SKILL.md from the first line that starts with this text (a registry's footer)")
	var exclude []string
	fl.Func("exclude", "leave out skills of the same name as those in this directory (repeatable): keeps an evaluation catalog out of the corpus", func(dir string) error {
		names, err := skillNames(dir)
		exclude = append(exclude, names...)
		return err
	})
	excludeNames := fl.String("exclude-names", "", "comma-separated skill names to leave out")
	var o vectorOptions
	fl.IntVar(&o.Words, "words", 0, "words in the table (0: 30000)")
	fl.IntVar(&o.Dim, "dim", 0, "dimensions (0: 100)")
	base := fl.String("base", "", "start from this table instead of building one from the DIRs")
	var tuneFiles []string
	fl.Func("tune", "tune the table with the labelled messages in this JSONL file (repeatable; see tune.go)", func(f string) error {
		tuneFiles = append(tuneFiles, f)
		return nil
	})
	fl.Parse(args)
	if *out == "" || fl.NArg() == 0 || *base != "" && len(tuneFiles) == 0 {
		fmt.Fprintln(os.Stderr, "usage: matchlab vectors -o FILE [-base TABLE -tune FILE...] [flags] DIR...")
		fl.PrintDefaults()
		os.Exit(2)
	}
	skip := map[string]bool{}
	for _, n := range append(exclude, strings.Split(*excludeNames, ",")...) {
		if n = strings.TrimSpace(n); n != "" {
			skip[strings.ToLower(n)] = true
		}
	}
	return buildTable(tableJob{out: *out, base: *base, cut: *cut, dirs: fl.Args(), tuneFiles: tuneFiles, skip: skip, opts: o})
}

// tableJob is what building a table needs.
type tableJob struct {
	out, base, cut  string
	dirs, tuneFiles []string
	skip            map[string]bool // names (lower case) left out of the corpus
	opts            vectorOptions
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
	var w *matchtext.WordVectors
	if job.base != "" {
		if w, err = readTable(job.base); err == nil {
			c.docs(func(string) bool { return true }) // only the corpus
		}
	} else {
		w, err = buildVectors(iter.Seq[string](c.docs), job.opts)
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
	fmt.Fprintf(os.Stderr, "matchlab: read %d SKILL.md files, %d without a readable name, %s %d", c.read, c.bad, learned, c.used)
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
