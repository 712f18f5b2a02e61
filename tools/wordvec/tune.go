package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost/host/match"
)

// A tune file holds one labelled message per line:
//
//	{"message": "our server fetches whatever URL a user pastes, is that risky?", "skill": "owner--repo--security-review"}
//	{"message": "my gym keeps charging me after I cancelled", "skill": null}
//
// "skill" is the folder of the skill's SKILL.md relative to one of the
// DIRs, or null for a message no skill should take. The skills a message
// is labelled with, and every other skill of the corpus as a wrong answer,
// are what match.WordVectors.Tune learns from.

// skillSet is the corpus's skills by folder, in the order read.
type skillSet struct {
	docs  []match.Doc
	index map[string]int
}

func (s *skillSet) add(folder string, data []byte, cut string) {
	d, ok := skillDoc(data, cut)
	if !ok {
		return
	}
	if s.index == nil {
		s.index = map[string]int{}
	}
	s.index[filepath.ToSlash(folder)] = len(s.docs)
	s.docs = append(s.docs, d)
}

// tune reads the labelled messages of files and tunes w with them. A
// labelled skill that the corpus left out (its name was taken by an
// earlier skill) is read from the first of dirs that has it.
func tune(w *match.WordVectors, corpus *skillSet, files, dirs []string, cut string) (*match.WordVectors, error) {
	var examples []match.TuneExample
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for line := 1; sc.Scan(); line++ {
			var r struct {
				Message string  `json:"message"`
				Skill   *string `json:"skill"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Message == "" {
				f.Close()
				return nil, fmt.Errorf("%s:%d: want {\"message\": ..., \"skill\": FOLDER or null}", name, line)
			}
			e := match.TuneExample{Message: r.Message, Skill: -1}
			if r.Skill != nil {
				i, err := corpus.find(*r.Skill, dirs, cut)
				if err != nil {
					f.Close()
					return nil, fmt.Errorf("%s:%d: %w", name, line, err)
				}
				e.Skill = i
			}
			examples = append(examples, e)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return w.Tune(corpus.docs, examples, match.TuneOptions{})
}

func (s *skillSet) find(folder string, dirs []string, cut string) (int, error) {
	if i, ok := s.index[filepath.ToSlash(folder)]; ok {
		return i, nil
	}
	for _, dir := range dirs {
		if data, err := os.ReadFile(filepath.Join(dir, folder, "SKILL.md")); err == nil {
			n := len(s.docs)
			if s.add(folder, data, cut); len(s.docs) > n {
				return n, nil
			}
			return 0, fmt.Errorf("skill %q: SKILL.md has no name", folder)
		}
	}
	return 0, fmt.Errorf("skill %q: no SKILL.md in %v", folder, dirs)
}

func readTable(path string) (*match.WordVectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return match.ReadWordVectors(f)
}
