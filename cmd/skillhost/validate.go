package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/skill"
)

type validation struct {
	Path     string   `json:"path"`
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

func (a *app) validateCmd() *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "validate [--strict] PATH...",
		Short: "Validate skills: a skill directory, a SKILL.md, or a root of skill directories",
		Long: "Validate checks what loading accepts (warnings go to stderr). With --strict it checks the open\n" +
			"Agent Skills specification: name rules, lengths in characters, and only the specification's keys.",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, paths []string) error {
			cfg, err := config.Load(a.configPath)
			if err != nil {
				return usage(err)
			}
			opts := skill.Options{RequireExec: cfg.Scripts.RequireExec}
			var results []validation
			for _, p := range paths {
				results = append(results, validatePath(p, strict, opts)...)
			}
			allValid := true
			for _, r := range results {
				allValid = allValid && r.Valid
				for _, w := range r.Warnings {
					fmt.Fprintf(a.stderr, "warning: %s: %s\n", r.Path, w)
				}
			}
			if a.jsonOut {
				if err := a.printJSON(results); err != nil {
					return err
				}
			} else {
				for _, r := range results {
					if r.Valid {
						fmt.Fprintf(a.stdout, "Valid skill: %s\n", r.Path)
						continue
					}
					fmt.Fprintf(a.stdout, "Validation failed for %s:\n", r.Path)
					for _, e := range r.Errors {
						fmt.Fprintf(a.stdout, "  - %s\n", e)
					}
				}
			}
			if !allValid {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "check the open Agent Skills specification instead of what loading accepts")
	return cmd
}

// validatePath validates what path names: a skill, its SKILL.md, or a root
// whose subdirectories are skills.
func validatePath(path string, strict bool, opts skill.Options) []validation {
	fi, err := os.Stat(path)
	if err != nil {
		return []validation{invalid(path, errors.Unwrap(err))}
	}
	if !fi.IsDir() {
		return []validation{validateOne(path, path, strict, opts)}
	}
	if _, err := skill.FileIn(path); err == nil {
		return []validation{validateOne(path, path, strict, opts)}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return []validation{invalid(path, err)}
	}
	var out []validation
	for _, e := range entries {
		sub := filepath.Join(path, e.Name())
		if fi, err := os.Stat(sub); err != nil || !fi.IsDir() || catalog.Skipped(e.Name()) {
			continue
		}
		if _, err := skill.FileIn(sub); errors.Is(err, skill.ErrNoSkillFile) {
			continue
		}
		out = append(out, validateOne(sub, sub, strict, opts))
	}
	if len(out) == 0 {
		return []validation{invalid(path, fmt.Errorf("no %s here or in its subdirectories", skill.FileName))}
	}
	return out
}

func validateOne(shown, path string, strict bool, opts skill.Options) validation {
	s, err := skill.ParseWith(path, opts)
	if err != nil {
		return invalid(shown, err)
	}
	v := validation{Path: shown, Valid: true, Errors: []string{}, Warnings: append([]string{}, s.Warnings...)}
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

func invalid(path string, err error) validation {
	return validation{Path: path, Errors: []string{err.Error()}, Warnings: []string{}}
}
