package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of the CPU fields (USER_HZ, 100 on every Linux
// architecture Go supports).
const clockTick = 10 * time.Millisecond

// Read reads pid's stat line. An error wrapping os.ErrNotExist (or ESRCH)
// means the process is gone.
func Read(pid int) (Stat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return parse(data)
}

// parse reads a stat line. The command name is in parentheses and may
// itself hold ") ", so the fields start after the last ')'.
func parse(data []byte) (Stat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return Stat{}, ErrMalformed
	}
	f := bytes.Fields(data[i+2:])
	if len(f) < 2 || len(f[0]) != 1 {
		return Stat{}, ErrMalformed
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return Stat{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	st := Stat{PPid: ppid, State: f[0][0]}
	// num_threads: field 20 of the line, 17 after the name.
	if len(f) > 17 {
		if st.Threads, err = strconv.Atoi(string(f[17])); err != nil {
			return Stat{}, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
	}
	// utime, stime, cutime and cstime: fields 14 to 17 of the line, 11 to
	// 14 after the name.
	for _, j := range []int{11, 12, 13, 14} {
		if j < len(f) {
			n, _ := strconv.ParseInt(string(f[j]), 10, 64)
			st.CPU += time.Duration(n) * clockTick
		}
	}
	return st, nil
}
