package landlock

import (
	"os"
	"slices"
	"sync"
	"time"
)

// tmpListing names the directories at the top of the host's /tmp: the
// view's /tmp is private, and a run's write beneath one of these was meant
// for the host, while a file in a directory of the run's own making is its
// scratch, not a lost write.
//
// The names are read again only when /tmp itself changed (another
// directory, or the modification time every entry added, removed or
// renamed sets): a busy host's /tmp holds hundreds of entries, and reading
// them for every run cost a warm call a tenth of a millisecond and more.
// The kernel's clock for those times is coarse, so a listing whose /tmp
// changed in the last two seconds is not kept: a change in the same tick
// would leave the time as it was.
type tmpListing struct {
	mu    sync.Mutex
	stamp dirStamp
	names []string
}

// settled is how long ago /tmp must have last changed for its listing to
// be kept: more than the coarsest directory times, whole seconds (ext3,
// or ext4 with small inodes), and the kernel's clock running a tick behind.
const settled = 2 * time.Second

// clock is time.Now; tests move it on to see a directory settle.
var clock = time.Now

// dirStamp is what says a directory's entries are as they were: its
// modification time, and its change time, which a tool that restores
// directory times cannot set back.
type dirStamp struct {
	fi           os.FileInfo
	mtime, ctime time.Time
}

func stampOf(dir string) dirStamp {
	fi, err := os.Stat(dir)
	if err != nil {
		return dirStamp{}
	}
	return dirStamp{fi: fi, mtime: fi.ModTime(), ctime: changeTime(fi)}
}

// same reports whether both stamps were taken and name one directory at
// one modification and change time.
func (s dirStamp) same(o dirStamp) bool {
	return s.fi != nil && o.fi != nil && os.SameFile(s.fi, o.fi) && s.mtime.Equal(o.mtime) && s.ctime.Equal(o.ctime)
}

// stampNow stamps dir before it is read, and gives the stamp a listing
// read after it may keep: the same, or none (matching nothing) while dir
// changed, by either time, less than settled ago. A change made while
// reading leaves a stamp that no longer matches, so the next run reads
// again; the time is taken first, so a change in the tick of the stamp
// always counts as recent.
func stampNow(dir string) (stamp, keep dirStamp) {
	now := clock()
	stamp = stampOf(dir)
	if stamp.fi != nil && (now.Sub(stamp.mtime) >= settled && now.Sub(stamp.ctime) >= settled) {
		keep = stamp
	}
	return stamp, keep
}

// dirs returns the current names; the caller must not change them.
// Parallel runs that find the listing stale each read /tmp, unlocked.
func (l *tmpListing) dirs(tmp string) []string {
	stamp, keep := stampNow(tmp)
	l.mu.Lock()
	if stamp.same(l.stamp) {
		defer l.mu.Unlock()
		return l.names
	}
	l.mu.Unlock()
	entries, _ := os.ReadDir(tmp)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	names = slices.Clip(names)
	l.mu.Lock()
	l.stamp, l.names = keep, names
	l.mu.Unlock()
	return names
}
