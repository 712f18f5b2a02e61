package mcpserver

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// memStat is a go_memstats_ metric read from runtime.MemStats.
type memStat struct {
	name, help, typ string
	value           func(*runtime.MemStats) float64
}

// memStats are the go_memstats_ metrics, by the names Prometheus's Go
// collector gives them, so that existing dashboards keep working.
var memStats = []memStat{
	{"alloc_bytes", "Bytes of live heap objects.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.Alloc) }},
	{"alloc_bytes_total", "Bytes ever allocated on the heap, freed or not.", "counter", func(m *runtime.MemStats) float64 { return float64(m.TotalAlloc) }},
	{"buck_hash_sys_bytes", "Bytes of the profiling bucket hash table.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.BuckHashSys) }},
	{"frees_total", "Heap objects ever freed.", "counter", func(m *runtime.MemStats) float64 { return float64(m.Frees) }},
	{"gc_sys_bytes", "Bytes of garbage collector metadata.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.GCSys) }},
	{"heap_alloc_bytes", "Bytes of live heap objects (as go_memstats_alloc_bytes).", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapAlloc) }},
	{"heap_idle_bytes", "Bytes of heap spans holding no object.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapIdle) }},
	{"heap_inuse_bytes", "Bytes of heap spans holding at least one object.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapInuse) }},
	{"heap_objects", "Live heap objects.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapObjects) }},
	{"heap_released_bytes", "Bytes of heap memory returned to the operating system.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapReleased) }},
	{"heap_sys_bytes", "Bytes of heap memory obtained from the operating system.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.HeapSys) }},
	{"last_gc_time_seconds", "When the last garbage collection ended, in seconds since the Unix epoch.", "gauge",
		func(m *runtime.MemStats) float64 { return float64(m.LastGC) / 1e9 }},
	{"mallocs_total", "Heap objects ever allocated.", "counter", func(m *runtime.MemStats) float64 { return float64(m.Mallocs) }},
	{"mcache_inuse_bytes", "Bytes of mcache structures in use.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.MCacheInuse) }},
	{"mcache_sys_bytes", "Bytes of memory obtained for mcache structures.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.MCacheSys) }},
	{"mspan_inuse_bytes", "Bytes of mspan structures in use.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.MSpanInuse) }},
	{"mspan_sys_bytes", "Bytes of memory obtained for mspan structures.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.MSpanSys) }},
	{"next_gc_bytes", "Heap size at which the next garbage collection starts.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.NextGC) }},
	{"other_sys_bytes", "Bytes of other runtime memory obtained from the operating system.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.OtherSys) }},
	{"stack_inuse_bytes", "Bytes of stack spans in use.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.StackInuse) }},
	{"stack_sys_bytes", "Bytes of stack memory obtained from the operating system.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.StackSys) }},
	{"sys_bytes", "Bytes of memory obtained from the operating system in all.", "gauge", func(m *runtime.MemStats) float64 { return float64(m.Sys) }},
}

// runtimeFamilies are the Go runtime's and the process's metrics, by the
// names Prometheus's Go and process collectors give them.
func runtimeFamilies() []family {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var fams []family
	for _, m := range memStats {
		fams = append(fams, family{name: "go_memstats_" + m.name, help: m.help, typ: m.typ, samples: []sample{{value: m.value(&ms)}}})
	}
	threads, _ := runtime.ThreadCreateProfile(nil)
	fams = append(fams,
		gcPauses(),
		gauge("go_goroutines", "Goroutines that exist now.", float64(runtime.NumGoroutine())),
		gauge("go_threads", "Operating system threads created.", float64(threads)),
		gauge("go_sched_gomaxprocs_threads", "GOMAXPROCS: threads that may run Go code at once.", float64(runtime.GOMAXPROCS(0))),
		family{name: "go_info", help: "The Go version the binary was built with.", typ: "gauge",
			samples: []sample{{labels: []label{{"version", runtime.Version()}}, value: 1}}})
	fams = append(fams,
		gauge("go_gc_gogc_percent", "The garbage collector's heap target percentage (GOGC).", gcPercent()),
		gauge("go_gc_gomemlimit_bytes", "The runtime's memory limit (GOMEMLIMIT).", float64(debug.SetMemoryLimit(-1)))) // a negative limit reads it, unchanged
	return append(fams, processFamilies()...)
}

// gcPercent is GOGC as the runtime read it at start: 100 unless the
// variable says otherwise, -1 for off. Nothing in skillhost changes it
// later (debug.SetGCPercent), and reading it here keeps runtime/metrics,
// whose initialiser costs every start, out of the binary.
func gcPercent() float64 {
	v := os.Getenv("GOGC")
	if v == "off" {
		return -1
	}
	if n, err := strconv.Atoi(v); err == nil {
		return float64(n)
	}
	return 100
}

// gcPauses is go_gc_duration_seconds: a summary of the garbage
// collector's stop-the-world pauses (minimum, quartiles, maximum).
func gcPauses() family {
	st := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&st)
	f := family{name: "go_gc_duration_seconds", help: "Stop-the-world pauses of the garbage collector, in seconds.", typ: "summary"}
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		f.samples = append(f.samples, sample{labels: []label{{"quantile", q}}, value: st.PauseQuantiles[i].Seconds()})
	}
	f.samples = append(f.samples, sample{suffix: "_sum", value: st.PauseTotal.Seconds()}, sample{suffix: "_count", value: float64(st.NumGC)})
	return f
}

// clockTicks is the unit of the times in /proc/self/stat (USER_HZ), 100
// on every Linux architecture Go supports.
const clockTicks = 100

// processFamilies are the process_ metrics, read from /proc on Linux;
// elsewhere, or where /proc cannot be read, the ones it would give are
// left out.
func processFamilies() []family {
	var fams []family
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		// Fields after the command name, which may hold spaces and
		// parentheses: f[0] is field 3 of proc(5), the state.
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		num := func(field int) float64 {
			if field-3 >= len(f) {
				return 0
			}
			v, _ := strconv.ParseFloat(f[field-3], 64)
			return v
		}
		fams = append(fams,
			counter("process_cpu_seconds_total", "User and system CPU time the process has spent, in seconds.", (num(14)+num(15))/clockTicks),
			gauge("process_virtual_memory_bytes", "Virtual memory size, in bytes.", num(23)),
			gauge("process_resident_memory_bytes", "Resident memory size, in bytes.", num(24)*float64(os.Getpagesize())))
		if boot, ok := bootTime(); ok {
			fams = append(fams, gauge("process_start_time_seconds", "When the process started, in seconds since the Unix epoch.", boot+num(22)/clockTicks))
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		fams = append(fams, gauge("process_open_fds", "Open file descriptors.", float64(len(fds))))
	}
	if limits, err := os.ReadFile("/proc/self/limits"); err == nil {
		if v, ok := softLimit(string(limits), "Max open files"); ok {
			fams = append(fams, gauge("process_max_fds", "The limit on open file descriptors.", v))
		}
		if v, ok := softLimit(string(limits), "Max address space"); ok {
			fams = append(fams, gauge("process_virtual_memory_max_bytes", "The limit on virtual memory, in bytes.", v))
		}
	}
	return append(fams, networkFamilies()...)
}

// bootTime is when the machine booted, in seconds since the Unix epoch
// (btime of /proc/stat).
func bootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			t, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return t, err == nil
		}
	}
	return 0, false
}

// softLimit reads the soft limit of the named resource from
// /proc/self/limits; "unlimited" is the largest 64-bit value, as the
// kernel holds it.
func softLimit(limits, name string) (float64, bool) {
	for _, line := range strings.Split(limits, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return float64(^uint64(0)), true
		}
		v, err := strconv.ParseFloat(f[0], 64)
		return v, err == nil
	}
	return 0, false
}

// networkFamilies are the bytes the process's network namespace has
// received and sent over IP (InOctets and OutOctets of the IpExt lines of
// /proc/self/net/netstat).
func networkFamilies() []family {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "IpExt:")
		if !ok {
			continue
		}
		if names == nil {
			names = strings.Fields(rest)
			continue
		}
		values := map[string]float64{}
		for i, v := range strings.Fields(rest) {
			if i < len(names) {
				values[names[i]], _ = strconv.ParseFloat(v, 64)
			}
		}
		return []family{
			counter("process_network_receive_bytes_total", "Bytes received over the network, in the process's network namespace.", values["InOctets"]),
			counter("process_network_transmit_bytes_total", "Bytes sent over the network, in the process's network namespace.", values["OutOctets"]),
		}
	}
	return nil
}
