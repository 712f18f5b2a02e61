package pluginclient

import (
	"os"
	"strconv"
	"strings"
)

// alive reports whether pid is a running process, not gone and not a
// zombie waiting to be reaped.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
