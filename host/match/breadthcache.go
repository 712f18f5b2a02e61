package match

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
)

// BreadthCache keeps skills' breadths between processes. Measuring them
// costs a pass over the background messages each time a catalog is
// indexed, and a one-shot command (skillhost match, activate) indexes on
// every call; with a cache, an unchanged catalog is measured once.
type BreadthCache interface {
	// Load returns the breadths stored under key, if any.
	Load(key string) ([]float64, bool)
	// Store keeps breadths under key. It is only a cache: a failure is
	// not reported.
	Store(key string, breadths []float64)
}

// DirBreadthCache is a BreadthCache of one small JSON file per key in a
// directory (created 0700 on the first Store). It keeps the newest
// maxBreadthFiles files and removes older ones on Store; a file that
// cannot be read or does not hold what its name says is ignored.
type DirBreadthCache string

// maxBreadthFiles is how many catalogs' breadths a DirBreadthCache keeps.
const maxBreadthFiles = 64

type breadthFile struct {
	Key     string    `json:"key"`
	Breadth []float64 `json:"breadth"`
}

func (d DirBreadthCache) path(key string) string {
	return filepath.Join(string(d), "breadth-"+key[:32]+".json")
}

// Load implements BreadthCache.
func (d DirBreadthCache) Load(key string) ([]float64, bool) {
	if d == "" || len(key) < 32 {
		return nil, false
	}
	data, err := os.ReadFile(d.path(key))
	if err != nil {
		return nil, false
	}
	var f breadthFile
	if json.Unmarshal(data, &f) != nil || f.Key != key {
		return nil, false
	}
	return f.Breadth, true
}

// Store implements BreadthCache: a concurrent Load sees the old file or
// the new one, never half (writeCacheFile).
func (d DirBreadthCache) Store(key string, breadths []float64) {
	if d == "" || len(key) < 32 {
		return
	}
	data, err := json.Marshal(breadthFile{Key: key, Breadth: breadths})
	if err != nil || writeCacheFile(d.path(key), data) != nil {
		return
	}
	d.prune()
}

// prune removes all but the newest maxBreadthFiles breadth files, and
// temporary files more than an hour old (left by a process that died
// between writing and renaming).
func (d DirBreadthCache) prune() {
	if tmps, err := filepath.Glob(filepath.Join(string(d), ".breadth-*")); err == nil {
		for _, f := range tmps {
			if st, err := os.Stat(f); err == nil && time.Since(st.ModTime()) > time.Hour {
				os.Remove(f)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(string(d), "breadth-*.json"))
	if err != nil || len(files) <= maxBreadthFiles {
		return
	}
	type aged struct {
		path string
		mod  int64
	}
	var all []aged
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			all = append(all, aged{f, st.ModTime().UnixNano()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod > all[j].mod })
	for _, a := range all[min(len(all), maxBreadthFiles):] {
		os.Remove(a.path)
	}
}

// buildIdentity names the code that measures breadth: the module version
// of a released build, the VCS revision of a build from a clean checkout,
// or else the executable's path, size and modification time (a rebuilt
// binary is another file). A build from a modified checkout is named by
// its executable: Go stamps it with the revision and "+dirty", which
// every edit of that checkout shares. It is "" when none of these can be
// had, and then nothing is cached: a breadth cached by other code could
// be wrong.
var buildIdentity = sync.OnceValue(func() string {
	bi, _ := debug.ReadBuildInfo()
	return identityOf(bi, os.Executable)
})

// identityOf is buildIdentity from the build information bi (nil when the
// binary has none) and the executable's path.
func identityOf(bi *debug.BuildInfo, executable func() (string, error)) string {
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" && !strings.Contains(v, "+dirty") {
			return bi.Main.Path + "@" + v
		}
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" && modified == "false" {
			return bi.Main.Path + "@" + rev
		}
	}
	exe, err := executable()
	if err != nil {
		return ""
	}
	st, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d", exe, st.Size(), st.ModTime().UnixNano())
}

// fieldDigest hashes the indexed fields of a catalog's skills, in index
// order, as Index splits them out, for the breadth cache's key. A nil
// *fieldDigest ignores what it is given.
type fieldDigest struct{ h hash.Hash }

func newFieldDigest() *fieldDigest { return &fieldDigest{sha256.New()} }

// add hashes one skill's fields.
func (d *fieldDigest) add(fields ...string) {
	if d == nil {
		return
	}
	for _, f := range fields {
		writeLenPrefixed(d.h, f)
	}
}

func (d *fieldDigest) sum() []byte {
	if d == nil {
		return nil
	}
	return d.h.Sum(nil)
}

// writeLenPrefixed writes s to h after its length, so that no two
// sequences of strings hash alike.
func writeLenPrefixed(h hash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

// breadthKey is the cache key of the breadths under o of the skills whose
// fields hash to fields (a fieldDigest's sum): a hash of the build, every
// option that changes a score, and those fields. It is "" when the
// breadths must not be cached: an unknown build, or tables given in the
// options rather than built in.
func breadthKey(o LexicalOptions, fields []byte) string {
	build := buildIdentity()
	if build == "" || fields == nil || o.Vectors != nil || o.EverydayModel != nil || o.Background != nil || o.ExampleSet != nil {
		return ""
	}
	// What the breadth does not depend on: its own strength and centre,
	// and the cache.
	o.Breadth, o.BreadthCentre, o.BreadthCache = 0, 0, nil
	h := sha256.New()
	writeLenPrefixed(h, "skillhost breadth 1")
	writeLenPrefixed(h, build)
	writeLenPrefixed(h, fmt.Sprintf("%+v", o))
	h.Write(fields)
	return hex.EncodeToString(h.Sum(nil))
}

// validBreadths reports whether b can be n skills' breadths: shares in
// [0, 1]. A cache holds what any process wrote, so it is checked.
func validBreadths(b []float64, n int) bool {
	if len(b) != n {
		return false
	}
	for _, x := range b {
		if !(x >= 0 && x <= 1) { // NaN too
			return false
		}
	}
	return true
}
