// Package skill reads one skill bundle: a directory holding SKILL.md (YAML
// front matter and a Markdown body) and optional scripts/, references/ and
// assets/ folders. It turns the bundle's executable scripts into tools and
// checks the bundle against the open Agent Skills specification.
//
// Parsing is forgiving where real skills differ from the specification
// (BOM, CRLF, blank lines before the front matter, unquoted colons) and
// strict where a mistake would be silent (duplicate keys, non-text names).
package skill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/safeio"
	"github.com/skillhost/skillhost/host/internal/yamlnode"
)

// FileName is the name of a skill's definition file. A lowercase skill.md is
// accepted too, as the reference validator does.
const FileName = "SKILL.md"

const lowerFileName = "skill.md"

// ErrNoSkillFile means a directory holds no SKILL.md at all, as opposed to a
// broken one.
var ErrNoSkillFile = errors.New("no " + FileName + " in this directory")

// MaxFileSize bounds how much of a SKILL.md is read; the specification asks
// for bodies under 500 lines, so a megabyte is generous.
const MaxFileSize = 1 << 20

// Skill is one parsed bundle.
type Skill struct {
	// Name and Description are the front-matter fields, as text.
	Name        string
	Description string
	// Dir is the absolute skill directory and File its SKILL.md.
	Dir  string
	File string
	// Instructions is the Markdown body, trimmed.
	Instructions string
	// Keys lists the front-matter keys in file order.
	Keys []string
	// Declared is what the capability keys (fs_read, fs_write, network,
	// timeout, trust) ask for, read once when the skill is parsed. Its Dir
	// is left empty: whoever computes a grant resolves the directory then.
	Declared grant.Declared
	// DeclaredWarnings say which capability values could not be used and
	// what was read instead (the safe default). They are not Warnings: they
	// are reported with the grant computed for a run, where they matter.
	DeclaredWarnings []string
	// Scripts are the regular files under scripts/, in walk order.
	Scripts []string
	// NotTools lists every file under scripts/ that is not a tool, with
	// the reason, in walk order: data files, __init__.py, Python
	// libraries, refused symlinks and so on.
	NotTools []NotTool
	// Skipped counts the NotTools that are also warnings: files that look
	// meant to run (a shebang or the exec bit) but are not tools, or that
	// scripts.require_exec leaves out.
	Skipped int
	// Tools are the scripts that can be run as tools.
	Tools []Tool
	// Warnings are problems that did not stop the bundle from loading.
	Warnings []string
	// Escapes lists paths in the bundle that resolve outside its directory
	// (a symlinked scripts/, SKILL.md or script). They are refused, and a
	// skill holding any is invalid.
	Escapes []string

	// front holds what Field and Validate need of the front matter. The
	// parsed YAML tree is most of the memory of a loaded skill, and a
	// catalog of thousands rarely needs it again, so it is dropped after
	// parsing and rebuilt, once, from the text on first use.
	front *frontMatter
}

type frontMatter struct {
	yaml     string
	yamlLine int
	repaired []int
	once     sync.Once
	values   map[string]*yaml.Node
}

// values returns the front matter's value nodes by key.
func (s *Skill) values() map[string]*yaml.Node {
	f := s.front
	if f == nil {
		return nil
	}
	f.once.Do(func() {
		d := &document{yaml: f.yaml, yamlLine: f.yamlLine}
		if d.parseYAML() == nil { // it parsed before, so it parses again
			f.values = d.valueNode
		}
	})
	return f.values
}

// CapabilityKeys are the front-matter keys skillhost reads as capabilities.
var CapabilityKeys = []string{"fs_read", "fs_write", "network", "timeout", "trust"}

// Field returns the decoded value of a front-matter key, or nil.
func (s *Skill) Field(key string) any {
	n := s.values()[key]
	if n == nil {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	return v
}

// Tool returns the tool named name, or nil.
func (s *Skill) Tool(name string) *Tool {
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// Locate returns the SKILL.md for path, which may name a skill directory or
// the file itself.
func Locate(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return path, nil
	}
	return FileIn(path)
}

// FileIn returns the SKILL.md (or skill.md) in dir, which the caller knows
// to be a directory, or an error wrapping ErrNoSkillFile.
func FileIn(dir string) (string, error) {
	for _, name := range []string{FileName, lowerFileName} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", dir, ErrNoSkillFile)
}

// Parse reads the bundle at path (a skill directory or its SKILL.md) with
// the default Options. Every error names the file and, where there is one,
// the field.
func Parse(path string) (*Skill, error) { return ParseWith(path, Options{}) }

// ParseWith is Parse with options.
func ParseWith(path string, opts Options) (*Skill, error) {
	file, err := Locate(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	s := &Skill{File: abs, Dir: filepath.Dir(abs)}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		target, terr := filepath.EvalSymlinks(abs)
		dir, derr := filepath.EvalSymlinks(s.Dir)
		if terr != nil || derr != nil || !inSkill(target, dir) {
			return nil, fmt.Errorf("%s at %s is a symlink that resolves outside the skill directory (%s); refusing it", FileName, abs, target)
		}
	}
	if filepath.Base(abs) == lowerFileName {
		s.warn("named %s; %s is the standard name", lowerFileName, FileName)
	}
	data, err := readLimited(abs)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", FileName, abs, err)
	}
	if err := s.parse(data); err != nil {
		return nil, fmt.Errorf("%s at %s %w", FileName, abs, err)
	}
	s.loadScripts(opts)
	return s, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxFileSize)
	}
	return data, nil
}

// parse fills s from the file contents. Its errors read as the tail of
// "SKILL.md at <path> ...".
func (s *Skill) parse(data []byte) error {
	doc, err := splitDocument(data)
	if err != nil {
		return fmt.Errorf("has %w", err)
	}
	if err := doc.parseYAML(); err != nil {
		return fmt.Errorf("has %w", err)
	}
	s.front = &frontMatter{yaml: doc.yaml, yamlLine: doc.yamlLine, repaired: doc.repaired}
	s.Keys = doc.keyOrder
	for _, line := range doc.repaired {
		s.warn("line %d: unquoted ': ' inside a value; read the value as a string (quote it to silence this)", line)
	}
	if s.Name, err = requiredText(doc, "name"); err != nil {
		return err
	}
	if s.Description, err = requiredText(doc, "description"); err != nil {
		return err
	}
	s.Instructions = strings.TrimSpace(doc.body)
	s.Declared, s.DeclaredWarnings = grant.FromFrontMatter(doc.valueNode)
	s.lenientChecks()
	return nil
}

// requiredText reads a required field as text. A number or boolean is read
// as written (name: 123 is "123"); a list or mapping is an error.
func requiredText(doc *document, key string) (string, error) {
	n := doc.valueNode[key]
	if n == nil || yamlnode.IsNull(n) {
		return "", fmt.Errorf("missing '%s'", key)
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("has a %s for '%s' on line %d; it must be text", yamlnode.Kind(n), key, n.Line+doc.yamlLine-1)
	}
	if strings.TrimSpace(n.Value) == "" {
		return "", fmt.Errorf("missing '%s' (the value is blank)", key)
	}
	return n.Value, nil
}

// lenientChecks warns about what the client guide of the specification says
// to load anyway.
func (s *Skill) lenientChecks() {
	if base := filepath.Base(s.Dir); s.Name != base {
		s.warn("name %q does not match the directory name %q", s.Name, base)
	}
	if n := len([]rune(s.Name)); n > MaxNameLength {
		s.warn("name is %d characters; the specification allows %d", n, MaxNameLength)
	}
	if n := len([]rune(s.Description)); n > MaxDescriptionLength {
		s.warn("description is %d characters; the specification allows %d", n, MaxDescriptionLength)
	}
	if strings.IndexFunc(s.Name, unicode.IsSpace) >= 0 {
		s.warn("name %q contains spaces; look it up with quotes", s.Name)
	}
}

// refuse records a path that leaves the skill directory, as a warning and
// an escape.
func (s *Skill) refuse(format string, args ...any) {
	s.Escapes = append(s.Escapes, fmt.Sprintf(format, args...))
	s.warn(format, args...)
}

func (s *Skill) warn(format string, args ...any) {
	s.Warnings = append(s.Warnings, fmt.Sprintf(format, args...))
}
