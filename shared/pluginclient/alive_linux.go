package pluginclient

import "github.com/skillhost/skillhost/shared/procstat"

// alive reports whether pid is a running process, not gone and not a
// zombie waiting to be reaped.
func alive(pid int) bool { return procstat.Alive(pid) }
