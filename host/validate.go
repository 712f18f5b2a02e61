package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/skill"
)

// ValidateOptions configure Validate.
type ValidateOptions struct {
	// ConfigPath is the configuration file, as for Open; only
	// scripts.require_exec is read from it.
	ConfigPath string
	// Strict checks the open Agent Skills specification (name rules,
	// lengths in characters, only the specification's keys) instead of
	// what loading accepts.
	Strict bool
}

// Validation is the verdict on one skill.
type Validation struct {
	// Path is the skill directory or SKILL.md as named (or found under a
	// named root).
	Path     string   `json:"path"`
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors"`   // never nil
	Warnings []string `json:"warnings"` // never nil; they do not make a skill invalid
	// NotTools lists every file under scripts/ that is not a tool, with
	// the reason (never nil; empty when the skill could not be parsed).
	NotTools []skill.NotTool `json:"not_tools"`
}

// Validate checks the skills each path names: a skill directory, its
// SKILL.md, or a root whose subdirectories hold skills (directories
// loading never looks at, such as .git and node_modules, and those without
// a SKILL.md are passed over). It returns one Validation per skill, in the order of
// paths and, within a root, of directory names. A path that does not
// exist, or a root with no skill in it, is one invalid Validation; one
// broken skill never hides the others. Without Strict a skill whose files
// reach outside its directory is invalid. The error is the
// configuration's, and then nothing was validated.
func Validate(opts ValidateOptions, paths ...string) ([]Validation, error) {
	cfg, err := config.Load(opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	parse := skill.Options{RequireExec: cfg.Scripts.RequireExec}
	var out []Validation
	for _, p := range paths {
		out = append(out, validatePath(p, opts.Strict, parse)...)
	}
	return out, nil
}

// validatePath validates what path names: a skill, its SKILL.md, or a root
// whose subdirectories are skills.
func validatePath(path string, strict bool, opts skill.Options) []Validation {
	fi, err := os.Stat(path)
	if err != nil {
		return []Validation{invalid(path, errors.Unwrap(err))}
	}
	if !fi.IsDir() {
		return []Validation{validateOne(path, strict, opts)}
	}
	if _, err := skill.FileIn(path); err == nil {
		return []Validation{validateOne(path, strict, opts)}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return []Validation{invalid(path, err)}
	}
	var out []Validation
	for _, e := range entries {
		sub := filepath.Join(path, e.Name())
		if fi, err := os.Stat(sub); err != nil || !fi.IsDir() || catalog.Skipped(e.Name()) {
			continue
		}
		if _, err := skill.FileIn(sub); errors.Is(err, skill.ErrNoSkillFile) {
			continue
		}
		out = append(out, validateOne(sub, strict, opts))
	}
	if len(out) == 0 {
		return []Validation{invalid(path, fmt.Errorf("no %s here or in its subdirectories", skill.FileName))}
	}
	return out
}

func validateOne(path string, strict bool, opts skill.Options) Validation {
	s, err := skill.ParseWith(path, opts)
	if err != nil {
		return invalid(path, err)
	}
	v := Validation{Path: path, Valid: true, Errors: []string{}, Warnings: append([]string{}, s.Warnings...),
		NotTools: append([]skill.NotTool{}, s.NotTools...)}
	if len(s.Escapes) > 0 && !strict {
		// A bundle that reaches outside its own directory is never valid.
		v.Valid, v.Errors = false, append([]string{}, s.Escapes...)
	}
	if strict {
		if problems := skill.Strict(s); len(problems) > 0 {
			v.Valid, v.Errors = false, problems
		}
	}
	return v
}

func invalid(path string, err error) Validation {
	return Validation{Path: path, Errors: []string{err.Error()}, Warnings: []string{}, NotTools: []skill.NotTool{}}
}
