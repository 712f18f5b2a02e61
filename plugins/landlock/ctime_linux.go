package landlock

import (
	"os"
	"syscall"
	"time"
)

// changeTime is fi's inode change time, which, unlike the modification
// time, no one can set back (rsync -a and tar restore directory times).
func changeTime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix())
	}
	return time.Time{}
}
