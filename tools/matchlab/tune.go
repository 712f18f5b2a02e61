package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/internal/matchtext"
)

// A tune file holds one labelled message per line:
//
//	{"message": "our server fetches whatever URL a user pastes, is that risky?", "skill": "owner--repo--security-review"}
//	{"message": "my gym keeps charging me after I cancelled", "skill": null}
//
// "skill" is the folder of the skill's SKILL.md relative to one of the
// DIRs, or null for a message no skill should take. The skills a message
// is labelled with, and every other skill of the corpus as a wrong answer,
// are what tuneVectors learns from.

// label is one line of a tune file.
type label struct {
	message, folder string // folder "" for no skill
	where           string // file:line, for errors
}

// readLabels reads the tune files, in order.
func readLabels(files []string) ([]label, error) {
	var out []label
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		line := 0
		for sc.Scan() {
			line++
			var r struct {
				Message string  `json:"message"`
				Skill   *string `json:"skill"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Message == "" || r.Skill != nil && *r.Skill == "" {
				f.Close()
				return nil, fmt.Errorf("%s:%d: want {\"message\": TEXT, \"skill\": FOLDER or null}", name, line)
			}
			l := label{message: r.Message, where: fmt.Sprintf("%s:%d", name, line)}
			if r.Skill != nil {
				l.folder = *r.Skill
			}
			out = append(out, l)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
		}
	}
	return out, nil
}

// skillSet is the corpus's skills by folder, in the order read.
type skillSet struct {
	docs  []match.Doc
	index map[string]int
}

// add adds a skill; a folder already there (the same path under another
// DIR) keeps the first, and the second is not added at all, or it would
// count twice among the wrong answers.
func (s *skillSet) add(folder string, d match.Doc) {
	if s.index == nil {
		s.index = map[string]int{}
	}
	key := filepath.ToSlash(folder)
	if _, ok := s.index[key]; ok {
		return
	}
	s.index[key] = len(s.docs)
	s.docs = append(s.docs, d)
}

// tune tunes w with the labelled messages. A labelled skill that the corpus
// left out (its name was taken by an earlier skill) is read from the first
// of dirs that has it; it then takes part as a wrong answer too, beside the
// skill of the same name that was kept.
func tune(w *matchtext.WordVectors, corpus *skillSet, labels []label, dirs []string, cut string) (*matchtext.WordVectors, error) {
	examples := make([]example, len(labels))
	for i, l := range labels {
		examples[i] = example{Message: l.message, Skill: -1}
		if l.folder != "" {
			j, err := corpus.find(l.folder, dirs, cut)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.where, err)
			}
			examples[i].Skill = j
		}
	}
	return tuneVectors(w, corpus.docs, examples, tuneOptions{})
}

func (s *skillSet) find(folder string, dirs []string, cut string) (int, error) {
	if i, ok := s.index[filepath.ToSlash(folder)]; ok {
		return i, nil
	}
	for _, dir := range dirs {
		if data, err := os.ReadFile(filepath.Join(dir, folder, "SKILL.md")); err == nil {
			d, ok := skillDoc(data, cut)
			if !ok {
				return 0, fmt.Errorf("skill %q: SKILL.md has no name", folder)
			}
			s.add(folder, d)
			return len(s.docs) - 1, nil
		}
	}
	return 0, fmt.Errorf("skill %q: no SKILL.md in %v", folder, dirs)
}

func readTable(path string) (*matchtext.WordVectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return matchtext.ReadWordVectors(f)
}

// readLabelsFor is readLabels for a flag that builds something from the
// labelled messages alone, which it needs at least one file of.
func readLabelsFor(flag string, files []string) ([]label, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%s needs the labelled messages: give at least one FILE", flag)
	}
	return readLabels(files)
}

// writeEveryday learns the everyday-question classifier from the labelled
// messages in files and writes it to path.
func writeEveryday(path string, files []string) error {
	labels, err := readLabelsFor("everyday", files)
	if err != nil {
		return err
	}
	examples := make([]everydayExample, len(labels))
	everyday := 0
	for i, l := range labels {
		examples[i] = everydayExample{Message: l.message, Everyday: l.folder == ""}
		if l.folder == "" {
			everyday++
		}
	}
	if err := writeFile(path, trainEveryday(examples, everydayOptions{})); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "matchlab: learned the everyday classifier from %d messages, %d of them for no skill, to %s\n", len(labels), everyday, path)
	return nil
}

// writeBackground writes the breadth factor's background messages: the
// labelled messages written for a skill that matchtext.InBackground picks,
// about a quarter of them. A quarter measures a skill's breadth as well as the
// whole did (NOTEBOOK.md, "The breadth factor") at a quarter of the time it adds to
// indexing; the hash picks it without looking at what it gives.
func writeBackground(path string, files []string) error {
	labels, err := readLabelsFor("background", files)
	if err != nil {
		return err
	}
	var kept []string
	for _, l := range labels {
		if l.folder != "" && matchtext.InBackground(l.message) {
			kept = append(kept, l.message)
		}
	}
	if err := os.WriteFile(path, []byte(matchtext.WriteBackground(kept)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "matchlab: wrote %d of %d messages to %s\n", len(kept), len(labels), path)
	return nil
}

// writeExamples writes to path the example requests the lexical matcher
// lends (matchtext.Examples): the messages of files written for a skill that
// are not background messages, grouped by skill in the order first met,
// each group with the word vector of its skill's name and description in
// the registry checkout dir (read as the corpus is, with cut). A skill
// whose SKILL.md is missing or unreadable is an error: the labels and the
// checkout must be the ones the README names.
func writeExamples(path, dir, cut string, files []string) error {
	labels, err := readLabelsFor("examples", files)
	if err != nil {
		return err
	}
	w, err := matchtext.DefaultWordVectors()
	if err != nil {
		return err
	}
	var order []string
	messages := map[string][]string{}
	for _, l := range labels {
		if l.folder != "" && !matchtext.InBackground(l.message) {
			if messages[l.folder] == nil {
				order = append(order, l.folder)
			}
			messages[l.folder] = append(messages[l.folder], l.message)
		}
	}
	var groups []matchtext.ExampleGroup
	var noVector int
	for _, folder := range order {
		file := filepath.Join(dir, folder, "SKILL.md")
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		d, ok := skillDoc(data, cut)
		if !ok {
			return fmt.Errorf("%s: no front matter with a name", file)
		}
		v, ok := w.TextVector(d.Name + "\n" + d.Description)
		if !ok {
			noVector++ // no word of it in the table: it could lend to nothing
			continue
		}
		groups = append(groups, matchtext.ExampleGroup{Vector: v, Messages: messages[folder]})
	}
	text := matchtext.WriteExamples(groups)
	// What was written is read back, to check it and to count what the
	// form could not hold (a message starting with "@" or "#").
	e, err := matchtext.ParseExamples(text)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "matchlab: wrote %d messages of %d skills to %s (%d skills with no word in the table left out)\n",
		e.Messages(), e.Len(), path, noVector)
	return nil
}
