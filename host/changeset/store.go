package changeset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// Manifest is what the host knows of a staged run.
type Manifest struct {
	Run   string `json:"run"`
	Skill string `json:"skill"`
	Tool  string `json:"tool"`
	// Started is when the run started: a host path changed later is a
	// conflict.
	Started time.Time `json:"started"`
	// Writes are the request's write grants, by index.
	Writes []string `json:"writes"`
	// Interrupted says the run did not end by itself (cancelled, timed
	// out, killed, or its plugin died): nothing of it was applied.
	Interrupted string   `json:"interrupted,omitempty"`
	Changes     []Change `json:"changes"`
}

// Store keeps the stages of runs beneath Dir, one directory per run: its
// stage (handed to the backend) and its manifest. A run whose changes were
// all applied leaves nothing.
type Store struct{ Dir string }

// isRunID reports whether s can name a run's directory: 1 to 64 ASCII
// letters, digits, hyphens and underscores. (A check by hand: the
// equivalent regular expression, compiled at start, cost every skillhost
// start 0.15 ms, its bounded repetition being 64 copies.)
func isRunID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (s Store) dir(run string) (string, error) {
	if !isRunID(run) {
		return "", fmt.Errorf("%q is not a run id", run)
	}
	return filepath.Join(s.Dir, run), nil
}

// Create makes run's directory and returns its stage: empty, 0700.
func (s Store) Create(run string) (string, error) {
	dir, err := s.dir(run)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", fmt.Errorf("staged writes: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("staged writes: %w", err)
	}
	stage := filepath.Join(dir, "stage")
	if err := os.Mkdir(stage, 0o700); err != nil {
		return "", fmt.Errorf("staged writes: %w", err)
	}
	return stage, nil
}

// Stage is run's stage directory.
func (s Store) Stage(run string) string { return filepath.Join(s.Dir, run, "stage") }

// Staged is where c's content lies in run's stage.
func (s Store) Staged(run string, c Change) string {
	if c.Discarded {
		return filepath.Join(shared.StageDiscarded(s.Stage(run)), c.Path)
	}
	return filepath.Join(shared.StageUpper(s.Stage(run), c.Grant), filepath.FromSlash(c.Rel()))
}

// Save writes m's manifest (through a rename: never half-written).
func (s Store) Save(m Manifest) error {
	dir, err := s.dir(m.Run)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "manifest.json.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("save changes of run %s: %w", m.Run, err)
	}
	return os.Rename(tmp, filepath.Join(dir, "manifest.json"))
}

// ErrNoRun is returned for a run the store does not hold.
var ErrNoRun = errors.New("no kept changes")

// Load reads run's manifest.
func (s Store) Load(run string) (Manifest, error) {
	dir, err := s.dir(run)
	if err != nil {
		return Manifest{}, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, fmt.Errorf("run %s: %w (skillhost changes list shows the runs that have some)", run, ErrNoRun)
	}
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	return m, nil
}

// List returns the manifests of every run kept, oldest first. A run whose
// manifest cannot be read (its host died mid-run) is listed with its id
// and no changes.
func (s Store) List() ([]Manifest, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, e := range entries {
		if !e.IsDir() || !isRunID(e.Name()) {
			continue
		}
		m, err := s.Load(e.Name())
		if err != nil {
			m = Manifest{Run: e.Name(), Interrupted: "the host stopped before it recorded the run"}
			if fi, err := e.Info(); err == nil {
				m.Started = fi.ModTime()
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// Drop removes run's directory with everything staged in it.
func (s Store) Drop(run string) error {
	dir, err := s.dir(run)
	if err != nil {
		return err
	}
	// A stage the run left empty (most runs) goes with two removals
	// instead of walking it twice.
	if os.Remove(filepath.Join(dir, "stage")) == nil && os.Remove(dir) == nil {
		return nil
	}
	// The overlay's work directory is left without permissions.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// Pending are the changes of cs not applied (refused, conflicting or
// kept).
func Pending(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if c.Outcome != Applied {
			out = append(out, c)
		}
	}
	return out
}
