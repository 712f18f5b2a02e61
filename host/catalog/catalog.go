// Package catalog discovers skill bundles under one or more roots and looks
// them up by name. It is lazy (nothing is read until first use), safe for
// concurrent use, and forgiving: a broken bundle becomes a warning naming
// its directory and never hides the others.
package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/internal/procs"
)

// skipDirs are never scanned for skills. Other hidden directories are:
// published collections keep skills under .curated or .system.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// Skipped reports whether a directory of this name under a root is never
// looked at for skills.
func Skipped(name string) bool { return skipDirs[name] }

// Catalog is a set of skills found under roots.
type Catalog struct {
	roots         []string
	ignoreMissing bool
	parse         skill.Options
	mu            sync.Mutex // serialises loads
	snap          atomic.Pointer[snapshot]
	gen           atomic.Uint64
}

type snapshot struct {
	byName   map[string]*skill.Skill
	list     []*skill.Skill
	warnings []string
	// broken are the bundles that failed to load, by directory name.
	broken map[string]Broken
	gen    uint64
}

// Broken is a skill bundle that failed to load.
type Broken struct {
	Dir string
	Err error
}

// Option adjusts a Catalog.
type Option func(*Catalog)

// IgnoreMissingRoots drops the warning for roots that do not exist, for
// default roots that a user may never have created.
func IgnoreMissingRoots() Option { return func(c *Catalog) { c.ignoreMissing = true } }

// ParseOptions sets how bundles are parsed (which scripts are tools).
func ParseOptions(o skill.Options) Option { return func(c *Catalog) { c.parse = o } }

// New returns a catalog over roots, scanned in order. Nothing is read
// until the first lookup.
func New(roots []string, opts ...Option) *Catalog {
	c := &Catalog{roots: append([]string(nil), roots...)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// DefaultRoots returns ~/.prompts/skills, then ~/.agents/skills and
// ./.agents/skills when they exist.
func DefaultRoots(home, cwd string) []string {
	roots := []string{filepath.Join(home, ".prompts", "skills")}
	for _, p := range []string{filepath.Join(home, ".agents", "skills"), filepath.Join(cwd, ".agents", "skills")} {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			roots = append(roots, p)
		}
	}
	return roots
}

// Roots returns the roots the catalog scans.
func (c *Catalog) Roots() []string { return append([]string(nil), c.roots...) }

func (c *Catalog) current() *snapshot {
	if s := c.snap.Load(); s != nil {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.snap.Load(); s != nil {
		return s
	}
	return c.load()
}

// load scans the roots and publishes the result; the caller holds c.mu.
func (c *Catalog) load() *snapshot {
	s := scan(c.roots, c.ignoreMissing, c.parse)
	s.gen = c.gen.Add(1)
	c.snap.Store(s)
	return s
}

// Reload rescans the roots. Lookups running concurrently see either the
// old or the new set, never a mix.
func (c *Catalog) Reload() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load()
}

// Generation changes every time the catalog is (re)loaded, so that indexes
// built from it know when to rebuild.
func (c *Catalog) Generation() uint64 { return c.current().gen }

// All returns the skills sorted by name.
func (c *Catalog) All() []*skill.Skill {
	return append([]*skill.Skill(nil), c.current().list...)
}

// Warnings returns every problem found while loading, each naming the
// directory it concerns.
func (c *Catalog) Warnings() []string {
	return append([]string(nil), c.current().warnings...)
}

// Names returns the skill names, sorted.
func (c *Catalog) Names() []string { return names(c.current().list) }

func names(list []*skill.Skill) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Name
	}
	return out
}

// NotFoundError reports an unknown skill name with the closest known ones.
type NotFoundError struct {
	Name        string
	Suggestions []string
	// Broken is the bundle of that name that failed to load, if one did.
	Broken *Broken
	// Searched, set when no skill loaded at all, are the directories
	// that were looked in.
	Searched []string
}

func (e *NotFoundError) Error() string {
	if e.Broken != nil {
		return fmt.Sprintf("skill %q failed to load: %s: %v", e.Name, e.Broken.Dir, e.Broken.Err)
	}
	msg := fmt.Sprintf("unknown skill %q", e.Name)
	if e.Searched != nil {
		return msg + fmt.Sprintf("; no skills found: looked for directories holding a SKILL.md in %s", strings.Join(e.Searched, ", "))
	}
	if len(e.Suggestions) > 0 {
		msg += "; did you mean " + quoteList(e.Suggestions) + "?"
	}
	return msg
}

// AmbiguousError reports a name that matches several skills loosely.
type AmbiguousError struct {
	Name    string
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("skill name %q is ambiguous: it could be %s", e.Name, quoteList(e.Matches))
}

// Find returns the skill with front-matter name name. When no name matches
// exactly it accepts, if unambiguous, a spelling that differs only in case
// or in -, _ and spaces, and then a directory name.
//
// Before the catalog is loaded, a skill in a directory named after it is
// read on its own, without scanning the others (see direct); the answer is
// the one a full load gives.
func (c *Catalog) Find(name string) (*skill.Skill, error) {
	if c.snap.Load() == nil {
		if sk := c.direct(name); sk != nil {
			return sk, nil
		}
	}
	s := c.current()
	if sk := s.byName[name]; sk != nil {
		return sk, nil
	}
	for _, key := range []func(*skill.Skill) string{
		func(sk *skill.Skill) string { return Fold(sk.Name) },
		func(sk *skill.Skill) string { return Fold(filepath.Base(sk.Dir)) },
	} {
		var hits []*skill.Skill
		for _, sk := range s.list {
			if key(sk) == Fold(name) {
				hits = append(hits, sk)
			}
		}
		switch len(hits) {
		case 0:
			continue
		case 1:
			return hits[0], nil
		default:
			return nil, &AmbiguousError{Name: name, Matches: names(hits)}
		}
	}
	nf := &NotFoundError{Name: name, Suggestions: Suggest(name, names(s.list))}
	if len(s.list) == 0 && len(s.broken) == 0 {
		nf.Searched = c.Searched()
	}
	if b, ok := s.broken[name]; ok {
		nf.Broken = &b
	}
	return nil, nf
}

// Broken lists the bundles that failed to load, by directory.
func (c *Catalog) Broken() []Broken {
	s := c.current()
	out := make([]Broken, 0, len(s.broken))
	for _, b := range s.broken {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out
}

// direct looks for the skill called name where a full load would pick it
// first: in the first root holding a directory of that name whose skill has
// that name (or that is itself such a skill), since a load prefers, among
// bundles claiming one name, those whose directory is named after it. It
// returns nil, so that the caller falls back to a full load, whenever the
// answer is anything else: no such directory, a broken bundle, a name that
// differs.
func (c *Catalog) direct(name string) *skill.Skill {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || skipDirs[name] {
		return nil
	}
	for _, root := range c.roots {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue
		}
		dir := root
		if _, err := skill.FileIn(root); err == nil { // a root that is itself a skill
			if filepath.Base(root) != name {
				continue
			}
		} else {
			dir = filepath.Join(root, name)
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
		}
		file, err := skill.FileIn(dir)
		if err != nil {
			return nil
		}
		sk, err := parseSafely(file, c.parse)
		if err != nil || sk.Name != name || filepath.Base(sk.Dir) != name {
			return nil
		}
		return sk
	}
	return nil
}

// Fold normalises a name for loose lookup: lower case, with runs of -, _
// and blanks as one -.
func Fold(name string) string {
	f := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' || r == ' ' || r == '\t' })
	return strings.Join(f, "-")
}

// IsNotFound reports whether err is a NotFoundError.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

func scan(roots []string, ignoreMissing bool, opts skill.Options) *snapshot {
	s := &snapshot{byName: map[string]*skill.Skill{}}
	var all []bundle
	for _, root := range roots {
		all = append(all, bundles(root, ignoreMissing, &s.warnings)...)
	}
	parsed := parseAll(all, opts)
	for i, b := range all { // in root and name order, whatever order they were parsed in
		s.add(b, parsed[i].skill, parsed[i].err)
	}
	sort.Slice(s.list, func(i, j int) bool { return s.list[i].Name < s.list[j].Name })
	return s
}

type parseResult struct {
	skill *skill.Skill
	err   error
}

// parseAll parses the bundles on every available core: parsing is most of
// the cost of loading a large catalog, and bundles are independent.
func parseAll(all []bundle, opts skill.Options) []parseResult {
	out := make([]parseResult, len(all))
	workers, done := procs.Workers(len(all)/64 + 1)
	defer done()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(all) {
					return
				}
				out[i].skill, out[i].err = parseSafely(all[i].file, opts)
			}
		}()
	}
	wg.Wait()
	return out
}

// bundle is a skill directory and the SKILL.md found in it.
type bundle struct{ dir, file string }

// bundles lists the directories under root that hold a SKILL.md, in name
// order; a root that is itself a skill yields just itself. A missing root
// is skipped silently when ignoreMissing is set.
func bundles(root string, ignoreMissing bool, warnings *[]string) []bundle {
	fi, err := os.Stat(root)
	if ignoreMissing && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		*warnings = append(*warnings, fmt.Sprintf("skills root %s: %v", root, errors.Unwrap(err)))
		return nil
	}
	if !fi.IsDir() {
		*warnings = append(*warnings, fmt.Sprintf("skills root %s is not a directory", root))
		return nil
	}
	if file, err := skill.FileIn(root); err == nil {
		return []bundle{{root, file}}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		*warnings = append(*warnings, fmt.Sprintf("skills root %s: %v", root, err))
		return nil
	}
	var out []bundle
	for _, e := range entries { // ReadDir sorts by name
		if skipDirs[e.Name()] {
			continue
		}
		dir := filepath.Join(root, e.Name())
		// The entry's type comes with the directory listing; only a
		// symlink needs a look at what it points to.
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
		} else if !e.IsDir() {
			continue
		}
		file, err := skill.FileIn(dir)
		if err != nil {
			if !errors.Is(err, skill.ErrNoSkillFile) {
				*warnings = append(*warnings, fmt.Sprintf("skipping %s: %v", dir, err))
			}
			continue
		}
		out = append(out, bundle{dir, file})
	}
	if len(out) == 0 {
		// A clone of a skills repository: its skills are in skills/.
		for _, d := range nestedIn(root) {
			if nested := bundles(d, true, warnings); len(nested) > 0 {
				return nested
			}
		}
	}
	return out
}

// nestedDirs are where a repository keeps its skills: a root that holds no
// skill directory of its own is read there, so that --skills at a clone of
// a skills repository finds them.
var nestedDirs = []string{"skills", filepath.Join(".claude", "skills"), filepath.Join(".agents", "skills")}

// nestedIn lists the nestedDirs that exist in root.
func nestedIn(root string) []string {
	var out []string
	for _, sub := range nestedDirs {
		d := filepath.Join(root, sub)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// Searched lists the directories a load looks for skill directories in:
// each root, and the nestedDirs of it that exist.
func (c *Catalog) Searched() []string {
	var out []string
	for _, root := range c.roots {
		out = append(out, root)
		out = append(out, nestedIn(root)...)
	}
	return out
}

func (s *snapshot) add(b bundle, sk *skill.Skill, err error) {
	dir := b.dir
	if err != nil {
		s.warnings = append(s.warnings, fmt.Sprintf("skipping %s: %v", dir, err))
		if s.broken == nil {
			s.broken = map[string]Broken{}
		}
		if _, seen := s.broken[filepath.Base(dir)]; !seen {
			s.broken[filepath.Base(dir)] = Broken{Dir: dir, Err: err}
		}
		return
	}
	for _, w := range sk.Warnings {
		s.warnings = append(s.warnings, fmt.Sprintf("skill %q (%s): %s", sk.Name, dir, w))
	}
	if first, dup := s.byName[sk.Name]; dup {
		if namedAfter(first) || !namedAfter(sk) {
			s.warnings = append(s.warnings, fmt.Sprintf("skipping %s: skill name %q is already taken by %s (the first root wins)", dir, sk.Name, first.Dir))
			return
		}
		// A skill in a directory named after it wins over one that only
		// claims the name, so that Find can go straight to the directory.
		s.warnings = append(s.warnings, fmt.Sprintf("skipping %s: skill name %q is taken by %s, whose directory is named after it", first.Dir, sk.Name, dir))
		s.byName[sk.Name] = sk
		for i, l := range s.list {
			if l == first {
				s.list[i] = sk
			}
		}
		return
	}
	s.byName[sk.Name] = sk
	s.list = append(s.list, sk)
}

// namedAfter reports whether sk's directory is named after it.
func namedAfter(sk *skill.Skill) bool { return filepath.Base(sk.Dir) == sk.Name }

// parseSafely turns a parser panic into an error, so that no bundle can
// take the catalog down.
func parseSafely(file string, opts skill.Options) (sk *skill.Skill, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error while parsing: %v", r)
		}
	}()
	return skill.ParseWith(file, opts)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
