//go:build linux

package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/pluginclient"
	"github.com/skillhost/skillhost/shared/procstat"
	"github.com/skillhost/skillhost/shared/runner"
)

// The escape suite: every attack is a real skill script run through the
// real backend, and must fail there. Each also runs under a control (an
// unconfined backend such as the null plugin, or directly without any runner
// for attacks on process lifetime) where it must succeed, so that no test
// can pass because the attack itself is broken. Which attacks run depends on
// what the backend claims in Info.Enforces: a claim it cannot keep fails.
//
// An attack is judged by what the harness sees outside the sandbox: a file
// on the host, a token it planted turning up in the output, one of its
// listeners reached, a process of its own touched, a segment in the host's
// IPC namespace, processes left behind. The few whose only effect is a
// marker the script prints, and which a namespace of the run's own keeps
// inside it (attack.inside), count only against a backend whose declared
// Info.Isolation shares that namespace with the host.

// control says where an attack must succeed to prove it is real.
type control int

const (
	viaNull   control = iota // the same script under the null plugin
	viaDirect                // the same script run directly, no runner at all
)

type outcome struct {
	run  string // the run's id, in escapees' names
	out  string
	res  shared.Result
	err  error
	took time.Duration
	// seen: the attack's watch saw its effect from outside while the run
	// was going.
	seen bool
}

type attack struct {
	name string
	// script is bash; env has BASE HOME SECRET WORK SKILL_DIR and the
	// listener addresses of the world.
	script string
	// python marks attacks written in Python (run by /usr/bin/python3).
	python bool
	// prepare adjusts the request (grant, limits, timeout).
	prepare func(w *world, r *shared.Request)
	// escaped inspects the outcome, and the world, and says whether the
	// attack achieved what it tried.
	escaped func(w *world, o outcome) bool
	control control
	// rootOnly: the control needs root's permissions (for example to read
	// /etc/shadow), so the attack is skipped for other users.
	rootOnly bool
	// notRoot: run as root, the control would reach every root process on
	// the machine, not just the test's; the attack runs as the other user.
	notRoot bool
	// claim is what the backend must claim (Info.Enforces) for the attack
	// to apply.
	claim claim
	// cleanup undoes what a successful control run left behind.
	cleanup func(w *world, o outcome)
	// mayRefuse: the confined run may fail to start (the backend refuses
	// the request), which counts as blocked.
	mayRefuse bool
	// needsSecret: the attack looks for EnvHostSecret.
	needsSecret bool
	// requires, if set, prepares what the attack needs on this machine,
	// or says why it cannot (the attack is then skipped).
	requires func(w *world) string
	// watch, if set, is called from outside the sandbox with each line
	// of the run's output as it streams (a line only says when to look,
	// never whether the attack worked) and reports whether it sees the
	// attack's effect; the outcome's seen records that it once did.
	watch func(w *world, run, line string) bool
	// inside, if set, names the namespace that keeps the attack's effect
	// inside the run when the backend declares it private: the effect
	// (a marker the script prints) then counts as an escape only for a
	// backend whose runs share that namespace with the host.
	inside *insideOnly
}

// insideOnly is a namespace that contains an attack's effect, and why.
type insideOnly struct {
	name string // as in Info.Isolation: "network", "pid", "mount"
	of   func(shared.Isolation) shared.Namespace
	why  string // what the effect reaches inside a namespace of its own
}

var (
	insideNetwork = func(why string) *insideOnly {
		return &insideOnly{"network", func(i shared.Isolation) shared.Namespace { return i.Network }, why}
	}
	insidePID = func(why string) *insideOnly {
		return &insideOnly{"pid", func(i shared.Isolation) shared.Namespace { return i.PID }, why}
	}
	insideMount = func(why string) *insideOnly {
		return &insideOnly{"mount", func(i shared.Isolation) shared.Namespace { return i.Mount }, why}
	}
)

// seenOutside: the attack's watch saw its effect during the run.
func seenOutside(_ *world, o outcome) bool { return o.seen }

// leaked returns a check that the output holds what the harness planted
// outside the grant (and the script could learn only by reading it).
func leaked(what func(w *world) string) func(*world, outcome) bool {
	return func(w *world, o outcome) bool {
		s := what(w)
		return s != "" && strings.Contains(o.out, s)
	}
}

// secretLeaked: the run's output holds the secret file's content.
var secretLeaked = leaked(func(w *world) string { return w.token("secret") })

func marker(_ *world, o outcome) bool { return strings.Contains(o.out, "ESCAPED") }

var attacks = []attack{
	// Reads: what the harness planted, a token of this world's, turns up
	// in the run's output.
	{name: "read ssh key in $HOME", claim: claimFSRead, script: `cat "$HOME/.ssh/id_rsa"`,
		escaped: leaked(func(w *world) string { return w.token("ssh-key") })},
	{name: "read /etc/shadow", claim: claimFSRead, script: `head -c 32 /etc/shadow | od -An -tx1 | tr -d ' \n'`, rootOnly: true,
		escaped: leaked(func(*world) string { return hexHead("/etc/shadow", 32) })},
	{name: "read a file outside the grant by absolute path", claim: claimFSRead, script: `cat "$SECRET"`, escaped: secretLeaked},
	{name: "read outside the grant by .. traversal", claim: claimFSRead, script: `cat "$WORK/../secret/data.txt"`, escaped: secretLeaked},
	{name: "read through a symlink planted in a granted directory", claim: claimFSRead, script: `ln -s "$SECRET" "$WORK/link" && cat "$WORK/link"`, escaped: secretLeaked},
	{name: "read through a symlink shipped inside the skill", claim: claimFSRead, script: `cat "$SKILL_DIR/references/leak"`, escaped: secretLeaked},
	{name: "read through a hard link made in a granted directory", claim: claimFSRead, script: `ln "$BASE/secret/linkable.txt" "$WORK/hard" && cat "$WORK/hard"`,
		escaped: leaked(func(w *world) string { return w.token("linkable") })},
	{name: "read the host's working directory", claim: claimFSRead, script: `cat ./cwd-file.txt`,
		escaped: leaked(func(w *world) string { return w.token("cwd") })},
	{name: "list $HOME", claim: claimFSRead, script: `ls -a "$HOME"`,
		escaped: leaked(func(w *world) string { return "notes-" + w.token("home") })},
	{name: "write outside fs_write", claim: claimFSWrite, script: `echo pwned > "$BASE/outside/file" && echo ESCAPED`,
		escaped: fileExists("outside/file"), cleanup: removeFile("outside/file")},
	{name: "write into the skill's own scripts/", claim: claimFSWrite, script: `echo pwned >> "$SKILL_DIR/scripts/planted" && echo ESCAPED`,
		escaped: func(w *world, o outcome) bool { return exists(filepath.Join(w.skill, "scripts", "planted")) },
		cleanup: func(w *world, o outcome) { os.Remove(filepath.Join(w.skill, "scripts", "planted")) }},
	// A run may have a /tmp of its own; what counts is the host's.
	{name: "write to /tmp", claim: claimFSWrite, script: `echo x > "/tmp/skillhost-escape-$RUN"`,
		escaped: func(_ *world, o outcome) bool { return exists("/tmp/skillhost-escape-" + o.run) },
		cleanup: func(_ *world, o outcome) { os.Remove("/tmp/skillhost-escape-" + o.run) }},
	{name: "a granted /tmp/x does not open /tmp/xy", claim: claimFSWrite, script: `echo x > "$BASE/xy/file" && echo ESCAPED`,
		prepare: func(w *world, r *shared.Request) { r.Grant.FSWrite = []string{filepath.Join(w.base, "x")} },
		escaped: fileExists("xy/file"), cleanup: removeFile("xy/file")},
	// Network: the harness's own listeners on the host's loopback say
	// whether anything reached them; a run's own loopback reaches none.
	{name: "TCP connect to a loopback server", claim: claimNetwork, script: `exec 3<>"/dev/tcp/127.0.0.1/$TCP_PORT" && echo connected`,
		escaped: heard("tcp")},
	// The harness dials, from the host, the port the script says it
	// listens on, and must read the run's id back.
	{name: "TCP listen on loopback", claim: claimNetwork, python: true, script: `
import os, socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
s.settimeout(8)
print("LISTENING", s.getsockname()[1], flush=True)
c, _ = s.accept()
c.sendall(os.environ["RUN"].encode())
c.close()`,
		watch: dialBack, escaped: seenOutside},
	{name: "UDP send", claim: claimNetwork, script: `echo "udp-$RUN" > "/dev/udp/127.0.0.1/$UDP_PORT" && echo sent`,
		escaped: heard("udp")},
	{name: "DNS lookup", claim: claimNetwork, escaped: heard("dns"), python: true, script: `
import os, socket, struct
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x07example\x03com\x00" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, ("127.0.0.1", int(os.environ["DNS_PORT"])))
answer = s.recv(512)
print("ESCAPED resolved to", socket.inet_ntoa(answer[-4:]))`},
	{name: "connect to a Unix socket outside the grant", claim: claimNetwork, escaped: heard("unix"), python: true, script: `
import os, socket
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["UNIX_SOCK"])
print("ESCAPED", s.recv(16))`},
	{name: "connect to an abstract Unix socket", claim: claimNetwork, escaped: heard("abstract"), python: true, script: `
import os, socket
s = socket.socket(socket.AF_UNIX)
s.connect("\0" + os.environ["ABSTRACT_SOCK"])
print("ESCAPED", s.recv(16))`},
	{name: "connect to the plugin's own socket", claim: claimNetwork, python: true, script: `
import os, socket
d = os.environ["PLUGIN_SOCKET_DIR"]
s = socket.socket(socket.AF_UNIX)
s.connect(os.path.join(d, os.listdir(d)[0]))
print("ESCAPED")`},
	{name: "netlink socket (ip addr)", claim: claimNetwork, script: `ip addr show lo >/dev/null && echo ESCAPED`,
		inside: insideNetwork("netlink answers about the run's own interfaces")},
	{name: "with the network on, a Unix socket outside the grant", claim: claimNetwork, escaped: heard("unix"), python: true, script: `
import os, socket
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["UNIX_SOCK"])
print("ESCAPED", s.recv(16))`,
		prepare: func(_ *world, r *shared.Request) { r.Grant.Network = true }},
	{name: "lower the supervisor's limits (prlimit)", claim: claimProcess, script: `prlimit --pid "$PPID" --nofile=3:3 && echo ESCAPED`,
		inside: insidePID("$PPID is a process of the run's own")},
	// The segment, keyed by the run, is looked for in the host's IPC
	// namespace: one the run made in its own is gone with the run.
	{name: "System V shared memory", claim: claimProcess, python: true, script: `
import ctypes, os, zlib
libc = ctypes.CDLL(None, use_errno=True)
key = zlib.crc32(os.environ["RUN"].encode()) & 0x7fffffff
if libc.shmget(key, 4096, 0o1000 | 0o600) < 0:
    print("shmget:", os.strerror(ctypes.get_errno()))`,
		escaped: func(_ *world, o outcome) bool { return shmOf(o.run) >= 0 },
		cleanup: func(_ *world, o outcome) {
			if id := shmOf(o.run); id >= 0 {
				unix.SysvShmCtl(id, unix.IPC_RMID, nil)
			}
		}},
	{name: "shared memory beyond the memory limit", claim: claimLimits, python: true, script: `
import mmap
size = 1536 << 20
m = mmap.mmap(-1, size, mmap.MAP_SHARED)
for off in range(0, size, 4096):
    m[off] = 1
print("ESCAPED mapped and touched", size >> 20, "MiB")`,
		// Touching 1.5 GiB takes seconds on a busy machine: the control
		// must not time out before it proves the attack.
		prepare:  func(_ *world, r *shared.Request) { r.Limits.Memory = 512 << 20; r.Grant.Timeout = 120 * time.Second },
		rootOnly: true}, // a memory cgroup needs root; unprivileged, RLIMIT_DATA does not count shared mappings (Probe says so)
	{name: "read the host's environment via /proc", claim: claimProcess, script: `cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -a "^$SECRET_NAME="`,
		escaped: hostSecretLeaked, rootOnly: true, needsSecret: true}, // the host runs as root: only root may read its /proc entries
	{name: "read the plugin's environment via /proc", claim: claimProcess, script: `tr '\0' '\n' < "/proc/$PLUGIN_PID/environ"`,
		escaped: func(w *world, o outcome) bool {
			for _, e := range w.pluginEnv {
				if strings.Contains(o.out, e) {
					return true
				}
			}
			return false
		},
		requires: func(w *world) string {
			if len(w.pluginEnv) < 2 {
				return "the harness cannot read the plugins' environments to know what to look for"
			}
			return ""
		}},
	{name: "a secret in the host's environment", claim: claimProcess, script: `env | grep -a "^$SECRET_NAME="; cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -a "^$SECRET_NAME="`,
		escaped: hostSecretLeaked, rootOnly: true, needsSecret: true},
	{name: "signal the parent", claim: claimProcess, script: `kill -WINCH "$PPID" && echo ESCAPED`,
		inside: insidePID("$PPID is a process of the run's own")},
	{name: "signal the plugin", claim: claimProcess, script: `kill -WINCH "$PLUGIN_PID" && echo ESCAPED`},
	// The listener is a process of the script's user outside the sandbox
	// that records each SIGUSR1 it gets in a file.
	{name: "signal a process outside the sandbox", claim: claimProcess, script: `kill -USR1 "$LISTENER_PID"; sleep 0.5`,
		escaped: func(w *world, _ outcome) bool { return w.signalled() }},
	// The harness reads the victim's TracerPid while the script holds it.
	{name: "ptrace a process outside the sandbox", claim: claimProcess, python: true, script: `
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE, PTRACE_DETACH = 0x4206, 17
pid = int(os.environ["VICTIM_PID"])
if libc.ptrace(PTRACE_SEIZE, pid, 0, 0) == 0:
    print("HOLDING", flush=True)
    time.sleep(3)
    libc.ptrace(PTRACE_DETACH, pid, 0, 0)
else:
    print("ptrace:", os.strerror(ctypes.get_errno()))`,
		watch: func(w *world, _, line string) bool { return line == "HOLDING" && w.victimTraced() }, escaped: seenOutside},
	// What tracing the parent would give, judged outside: its root, where
	// the parent is outside the run's filesystem (a supervisor), holds the
	// secret; a parent inside the sandbox sees only the run's files.
	{name: "read a secret through the parent's root (/proc/$PPID/root)", claim: claimProcess,
		script: `cat "/proc/$PPID/root$SECRET"`, escaped: secretLeaked},
	{name: "lower the limits of a process outside the sandbox (prlimit)", claim: claimProcess,
		script: `prlimit --pid "$VICTIM_PID" --nofile=3:3`,
		escaped: func(w *world, _ outcome) bool {
			now := openFilesLimit(w.victim.Process.Pid)
			return now != "" && now != w.victimFiles
		},
		cleanup: func(w *world, _ outcome) { w.resetVictim() }},
	// Tracing the parent, judged by what the traced parent can do: it is
	// made to create a file outside the grant (an openat injected at a
	// system call it is stopped in). A parent inside the sandbox's
	// namespaces cannot reach the file; one outside them, or outside the
	// run's restrictions, can.
	{name: "make the parent write outside the grant through ptrace", claim: claimProcess, python: true, requires: onAMD64,
		escaped: func(w *world, o outcome) bool { return exists(filepath.Join(w.base, "outside", "traced-"+o.run)) },
		cleanup: func(w *world, o outcome) { os.Remove(filepath.Join(w.base, "outside", "traced-"+o.run)) },
		script: `
import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
SEIZE, INTERRUPT, GETREGS, SETREGS, PEEK, POKE, STEP, DETACH = 0x4206, 0x4207, 12, 13, 1, 4, 9, 17
def err(what):
    print(what + ":", os.strerror(ctypes.get_errno())); sys.exit(0)
pid = os.getppid()
path = (os.environ["BASE"] + "/outside/traced-" + os.environ["RUN"]).encode() + b"\0"
if libc.ptrace(SEIZE, pid, None, None) != 0: err("seize")
if libc.ptrace(INTERRUPT, pid, None, None) != 0: err("interrupt")
os.waitpid(pid, 0x40000000)
regs = (ctypes.c_ulong * 27)()
if libc.ptrace(GETREGS, pid, None, regs) != 0: err("getregs")
saved = list(regs)
RAX, RCX, RDX, RSI, RDI, ORIG, RIP, RSP, R10 = 10, 11, 12, 13, 14, 15, 16, 19, 7
def peek(a):
    ctypes.set_errno(0)
    v = libc.ptrace(PEEK, pid, ctypes.c_void_p(a), None)
    if v == -1 and ctypes.get_errno(): err("peek")
    return v & 0xffffffffffffffff
if peek(saved[RIP] - 2) & 0xffff != 0x050f:
    print("not stopped in a system call"); libc.ptrace(DETACH, pid, None, None); sys.exit(0)
buf = (saved[RSP] - 4096) & ~7
words = [path[i:i+8].ljust(8, b"\0") for i in range(0, len(path), 8)]
old = [peek(buf + 8*i) for i in range(len(words))]
for i, w in enumerate(words):
    if libc.ptrace(POKE, pid, ctypes.c_void_p(buf + 8*i), ctypes.c_void_p(struct.unpack("<Q", w)[0])) != 0: err("poke")
regs[RAX], regs[ORIG], regs[RIP] = 257, 0xffffffffffffffff, saved[RIP] - 2
regs[RDI], regs[RSI], regs[RDX], regs[R10] = 0xffffffffffffff9c, buf, 0o1101, 0o644
if libc.ptrace(SETREGS, pid, None, regs) != 0: err("setregs")
if libc.ptrace(STEP, pid, None, None) != 0: err("step")
os.waitpid(pid, 0x40000000)
libc.ptrace(GETREGS, pid, None, regs)
print("openat in the parent returned", ctypes.c_long(regs[RAX]).value)
for i, w in enumerate(old):
    libc.ptrace(POKE, pid, ctypes.c_void_p(buf + 8*i), ctypes.c_void_p(w))
for i, v in enumerate(saved): regs[i] = v
libc.ptrace(SETREGS, pid, None, regs)
libc.ptrace(DETACH, pid, None, None)
`},
	{name: "ptrace the parent", claim: claimProcess, inside: insidePID("$PPID is a process of the run's own"), python: true, script: `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE, PTRACE_DETACH = 0x4206, 17
ppid = os.getppid()
if libc.ptrace(PTRACE_SEIZE, ppid, 0, 0) == 0:
    libc.ptrace(PTRACE_DETACH, ppid, 0, 0)
    print("ESCAPED")
else:
    print("ptrace:", os.strerror(ctypes.get_errno()))`},
	{name: "create a user namespace", claim: claimProcess, script: `unshare -U true && echo ESCAPED`},
	{name: "raise the file size limit", claim: claimLimits, script: `ulimit -f unlimited && head -c 2000000 /dev/zero > "$WORK/raised"`,
		escaped: func(w *world, _ outcome) bool {
			fi, err := os.Stat(filepath.Join(w.work, "raised"))
			return err == nil && fi.Size() > 1<<20
		},
		cleanup: removeFile("work/raised")},
	{name: "fork bomb", claim: claimLimits, python: true, script: `
import os, time
n = 0
for i in range(400):
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
    except OSError as e:
        print("fork failed after", n, "children:", e)
        break
print("started", n)
if n >= 400:
    print("ESCAPED")`,
		prepare: func(_ *world, r *shared.Request) { r.Limits.Processes = 64 }},
	{name: "fill the disk past the file-size limit", claim: claimLimits, script: `head -c 20000000 /dev/zero > "$WORK/big"; ls -l "$WORK/big"`,
		escaped: func(w *world, _ outcome) bool {
			fi, err := os.Stat(filepath.Join(w.work, "big"))
			return err == nil && fi.Size() > 1<<20
		},
		cleanup: removeFile("work/big")},
	{name: "keep a file in TMPDIR after the run", claim: claimFSWrite, script: `d=${TMPDIR:-/tmp}; echo loot > "$d/stash-$RUN" && echo "STASH $d/stash-$RUN"`,
		escaped: func(_ *world, o outcome) bool { return mentionedExists(o.out, "STASH ") },
		cleanup: func(_ *world, o outcome) { removeMentioned(o.out, "STASH ") }},
	{name: "a setsid process outlives the run", claim: claimLifetime, script: `setsid bash -c 'exec -a "escapee-$RUN" sleep 300' </dev/null >/dev/null 2>&1 & echo started`,
		control: viaDirect, escaped: escapeesAlive, cleanup: killEscapees},
	{name: "a setsid process outlives the timeout", claim: claimLifetime, script: `setsid bash -c 'trap "" TERM; exec -a "escapee-$RUN" sleep 300' </dev/null >/dev/null 2>&1 & sleep 300`,
		prepare: func(_ *world, r *shared.Request) { r.Grant.Timeout = time.Second },
		control: viaDirect, escaped: escapeesAlive, cleanup: killEscapees},
	// The first thread's exit system call ends only that thread: the
	// process shows as a zombie, with an empty command line, while its
	// other thread runs on.
	{name: "a process whose first thread ended outlives the run", claim: claimLifetime, python: true, script: `
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()
    os.execv(sys.executable, ["escapee-" + os.environ["RUN"], "-c", """
import ctypes, threading, time
threading.Thread(target=time.sleep, args=(300,)).start()
ctypes.CDLL(None).syscall(` + strconv.Itoa(unix.SYS_EXIT) + `, 0)"""])
# End only once the first thread has: before, teardown finds a plain process.
# Where /proc is hidden, a second is long enough for it.
for _ in range(1500):
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
    except OSError:
        time.sleep(1)
        break
    time.sleep(0.02)
print("started")`,
		control: viaDirect, escaped: firstThreadEndedAlive, cleanup: killEscapees},
	{name: "close stdout and sleep past the timeout", claim: claimLifetime, script: `exec >&- 2>&-; exec -a "escapee-$RUN" sleep 300`,
		prepare: func(_ *world, r *shared.Request) { r.Grant.Timeout = time.Second },
		control: viaDirect, escaped: func(w *world, o outcome) bool { return escapeesAlive(w, o) || o.took > 8*time.Second },
		cleanup: killEscapees},
	{name: "a fork bomb of setsid busy processes that ignore SIGTERM", claim: claimLifetime, python: true, script: `
import os, signal, sys
n = 0
for i in range(48):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork failed after", n, e)
        break
    if pid == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.execvp("bash", ["escapee-" + os.environ["RUN"], "-c", "trap '' TERM; while :; do :; done"])
    n += 1
print("started", n, flush=True)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    pass`,
		prepare: func(_ *world, r *shared.Request) {
			r.Grant.Timeout, r.KillGrace, r.Limits.Processes = 2*time.Second, 100*time.Millisecond, 32
		},
		control: viaDirect, escaped: outlivedOrLate, cleanup: killEscapees},
	{name: "starve the supervisor, then outlast the timeout", claim: claimLifetime, script: `
for t in /proc/$PPID/task/*; do t=${t##*/}; chrt -i -p 0 "$t" 2>/dev/null; renice -n 19 -p "$t" >/dev/null 2>&1; done
for i in 1 2 3 4; do (trap '' TERM; exec -a "escapee-$RUN" bash -c "trap '' TERM; while :; do :; done") & done
trap '' TERM; while :; do :; done`,
		prepare: func(_ *world, r *shared.Request) {
			r.Grant.Timeout, r.KillGrace = 2*time.Second, 100*time.Millisecond
		},
		control: viaDirect, escaped: outlivedOrLate, cleanup: killEscapees},
	// The owned file's mode, owner (a chown to its own owner changes only
	// its ctime), times and attributes, read by the harness.
	{name: "make a file outside the grant world-writable", claim: claimFSWrite, script: `chmod 666 "$OWNED"`,
		escaped: func(w *world, _ outcome) bool { return modeOf(w.owned) != 0o600 }, cleanup: resetOwned},
	{name: "change the owner of a file outside the grant", claim: claimFSWrite, script: `chown "$(id -u):$(id -g)" "$OWNED"`,
		escaped: func(w *world, _ outcome) bool { return w.ownedChanged() }, cleanup: resetOwned},
	{name: "change the times of a file outside the grant", claim: claimFSWrite, script: `touch -d 2001-02-03 "$OWNED"`,
		escaped: func(w *world, _ outcome) bool { return mtimeYear(w.owned) == 2001 }, cleanup: resetOwned},
	{name: "set an extended attribute outside the grant", claim: claimFSWrite, python: true, script: `
import os
os.setxattr(os.environ["OWNED"], "user.skillhost", b"pwned")`,
		escaped: func(w *world, _ outcome) bool {
			n, err := unix.Getxattr(w.owned, "user.skillhost", make([]byte, 16))
			return err == nil && n > 0
		},
		cleanup: resetOwned},
	{name: "watch a directory outside the grant", claim: claimFSRead, python: true, script: `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
wd = libc.inotify_add_watch(fd, os.path.dirname(os.environ["SECRET"]).encode(), 0xfff)
print("ESCAPED" if wd >= 0 else "inotify: " + os.strerror(ctypes.get_errno()))`},
	{name: "a set-uid copy of a program in the grant (chmod)", claim: claimFSWrite, script: `cp /usr/bin/id "$WORK/id" && chmod u+s "$WORK/id"; ls -l "$WORK/id"`,
		escaped: setIDFileIn("work")},
	{name: "a set-gid file in the grant (created with the bit)", claim: claimFSWrite, python: true, script: `
import os
fd = os.open(os.path.join(os.environ["WORK"], "sgid"), os.O_CREAT | os.O_WRONLY, 0o2755)
os.close(fd)
print(oct(os.stat(os.path.join(os.environ["WORK"], "sgid")).st_mode))`,
		escaped: setIDFileIn("work")},
	{name: "a set-uid directory made in the grant", claim: claimFSWrite, script: `mkdir -m 6755 "$WORK/sdir"; ls -ld "$WORK/sdir"`,
		escaped: setIDFileIn("work")},
	{name: "renice, pin and idle a process outside the sandbox", claim: claimProcess, script: `
renice -n 19 -p "$VICTIM_PID" >/dev/null && echo ESCAPED-nice
taskset -p 1 "$VICTIM_PID" >/dev/null && echo ESCAPED-affinity
ionice -c 3 -p "$VICTIM_PID" && echo ESCAPED-ioprio
chrt -i -p 0 "$VICTIM_PID" && echo ESCAPED-sched`,
		escaped: func(w *world, _ outcome) bool { return w.victimTouched() }, cleanup: func(w *world, _ outcome) { w.resetVictim() }},
	// The victim is a process of the user outside the sandbox.
	{name: "renice every process of the user", claim: claimProcess, script: `renice -n 19 -u "$(id -u)" >/dev/null`,
		escaped: func(w *world, _ outcome) bool { return w.victimTouched() },
		notRoot: true, cleanup: func(w *world, _ outcome) { w.resetVictim() }},
	{name: "a granted directory swapped for a symlink to a secret", claim: claimFSRead, script: `cat "$BASE/swap/data.txt"`, escaped: secretLeaked,
		prepare:   func(w *world, r *shared.Request) { r.Grant.FSRead = []string{filepath.Join(w.base, "swap")} },
		mayRefuse: true},

	// Round three: what a view of the grant removes by construction, and
	// what the backend does on the host on the run's behalf.
	{name: "a write grant created through a symlink swapped into its parent", claim: claimFSWrite, mayRefuse: true,
		script: `mkdir -p "$WORK/sub/made" && echo made`,
		prepare: func(w *world, r *shared.Request) {
			os.Symlink(filepath.Join(w.base, "outside"), filepath.Join(w.work, "sub"))
			r.Grant.FSWrite = []string{w.work, filepath.Join(w.work, "sub", "made")}
		},
		escaped: fileExists("outside/made"), cleanup: func(w *world, _ outcome) { os.RemoveAll(filepath.Join(w.base, "outside", "made")) }},
	{name: "read a private TLS key", claim: claimFSRead, rootOnly: true, requires: privateKeyPresent,
		script: `for f in /etc/ssl/private/* /etc/pki/tls/private/*; do [ -f "$f" ] && head -c 32 "$f" | od -An -tx1 | tr -d ' \n' && echo; done; true`,
		escaped: func(_ *world, o outcome) bool {
			for _, f := range privateKeys() {
				if h := hexHead(f, 32); h != "" && strings.Contains(o.out, h) {
					return true
				}
			}
			return false
		}},
	{name: "read extended attributes of a file outside the grant", claim: claimFSRead, python: true, requires: secretXattr, script: `
import os
p = os.environ["SECRET"]
got = (os.listxattr(p), os.getxattr(p, "user.skillhost"))
print(got)`, escaped: leaked(func(w *world) string { return w.token("xattr") })},
	{name: "read a symlink's target outside the grant", claim: claimFSRead,
		script: `readlink "$BASE/secret/token-link"`, escaped: leaked(func(w *world) string { return w.token("link") })},
	{name: "list the mount table (listmount)", claim: claimFSRead, python: true, requires: listmountWorks,
		inside: insideMount("listmount lists the run's own mount table"), script: `
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
req = struct.pack("=IIQQ", 24, 0, 0xFFFFFFFFFFFFFFFF, 0)
buf = (ctypes.c_uint64 * 512)()
n = libc.syscall(458, ctypes.c_char_p(req), buf, 512, 0)
if n > 0:
    print("ESCAPED", n, "mounts")
else:
    print("listmount:", ctypes.get_errno())`},
	{name: "hold a lease on a readable file", claim: claimProcess, python: true, script: `
import fcntl, os, time
F_SETLEASE = 1024
fd = os.open(os.environ["OWNED"], os.O_RDONLY)
fcntl.fcntl(fd, F_SETLEASE, fcntl.F_RDLCK)
print("LEASED", flush=True)
time.sleep(3)`,
		// A writer outside the sandbox that may not wait is turned away.
		watch: func(w *world, _, line string) bool { return line == "LEASED" && w.ownedLeased() }, escaped: seenOutside,
		prepare: func(w *world, r *shared.Request) { r.Grant.FSRead = append(r.Grant.FSRead, filepath.Dir(w.owned)) }},
	{name: "a temporary tree too deep to remove recursively", claim: claimFSWrite, python: true, script: `
import os
top = os.path.join(os.environ.get("TMPDIR", "/tmp"), "deep-%s-%d" % (os.environ["RUN"], os.getpid()))
os.mkdir(top)
os.chdir(top)
for _ in range(4700):
    os.mkdir("d")
    os.chdir("d")
open("bottom", "w").write("left behind")
print("TREE " + top)`,
		escaped: func(_ *world, o outcome) bool { return mentionedExists(o.out, "TREE ") },
		// 4,700 directories take a busy machine well over the suite's
		// usual 15 s; the attack is on the cleanup, not on time.
		prepare: func(_ *world, r *shared.Request) { r.Grant.Timeout = 2 * time.Minute },
		// rm copes with a tree deeper than the descriptor limit; a run
		// stopped before it printed its tree leaves one by its run's name.
		cleanup: func(_ *world, o outcome) {
			left := mentioned(o.out, "TREE ")
			for _, dir := range []string{os.TempDir(), "/tmp"} {
				more, _ := filepath.Glob(filepath.Join(dir, "deep-"+o.run+"-*"))
				left = append(left, more...)
			}
			for _, p := range left {
				exec.Command("rm", "-rf", "--", p).Run()
			}
		}},
	{name: "plant a git hook in a protected path of the write grant", claim: claimFSWrite,
		script: `printf '#!/bin/sh\necho pwned\n' > "$WORK/.git/hooks/pre-commit" && chmod +x "$WORK/.git/hooks/pre-commit" && echo ESCAPED`,
		prepare: func(w *world, r *shared.Request) {
			hooks := filepath.Join(w.work, ".git", "hooks")
			os.MkdirAll(hooks, 0o777)
			os.Chmod(filepath.Join(w.work, ".git"), 0o777)
			os.Chmod(hooks, 0o777)
			r.Grant.Protected = []string{hooks}
		},
		escaped: fileExists("work/.git/hooks/pre-commit")},
	// Staged writes: whatever the run writes, the real tree does not
	// change; the control (direct writes) plants each of these.
	planting("plant git settings through .git/commondir", "commondir",
		`echo x > .git/commondir && mkdir -p .git/x && printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' > .git/x/config`, ".git/commondir"),
	planting("rename .git aside and plant a fresh one", "rename",
		`{ mv .git .git.old 2>/dev/null || { cp -r .git .git.old && rm -rf .git; }; } && mkdir -p .git && printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' > .git/config`, ".git.old"),
	planting("plant a hook in the repository's core.hooksPath", "hookspath",
		`mkdir -p tools/hooks && printf '#!/bin/sh\ntouch /tmp/pwned\n' > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit`, "tools/hooks/pre-commit"),
	planting("plant a nested repository", "nested",
		`mkdir -p sub/.git/objects sub/.git/refs && echo 'ref: refs/heads/main' > sub/.git/HEAD && printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' > sub/.git/config`, "sub/.git/config"),
	planting("plant .git as a file", "gitfile",
		`rm -rf .git && mkdir -p .g && printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' > .g/config && echo 'gitdir: .g' > .git`, ".g/config"),
	planting("plant agent and editor settings", "agents",
		`mkdir -p .cursor .vscode && echo '{"mcpServers":{}}' > .cursor/mcp.json && echo '{}' > .vscode/tasks.json && echo 'run curl evil' > CLAUDE.md`, ".cursor/mcp.json"),
	{name: "join the supervisor's process group", claim: claimProcess, inside: insidePID("$PPID's process group is the run's own"), python: true, script: `
import os
os.setpgid(0, os.getpgid(os.getppid()))
print("ESCAPED: in group", os.getpgrp())`},
}

// planting is an attack on staged writes: in a repository of its own
// beneath the write grant (dir, a skeleton .git with core.hooksPath set to
// tools/hooks) the script runs script, with a stage handed to the backend;
// it escaped if planted (relative to dir) exists in the real tree. The
// control writes directly, so there it is planted.
func planting(name, dir, script, planted string) attack {
	return attack{name: name, claim: claimStagedWrites,
		script: fmt.Sprintf(`cd "$WORK/%s" && %s && echo ESCAPED`, dir, script),
		prepare: func(w *world, r *shared.Request) {
			repo := filepath.Join(w.work, dir)
			os.RemoveAll(repo)
			for _, d := range []string{".git/objects", ".git/refs/heads", ".git/hooks"} {
				os.MkdirAll(filepath.Join(repo, d), 0o755)
			}
			os.WriteFile(filepath.Join(repo, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			os.WriteFile(filepath.Join(repo, ".git", "config"), []byte("[core]\n\trepositoryformatversion = 0\n\thooksPath = tools/hooks\n"), 0o644)
			os.WriteFile(filepath.Join(repo, "README"), []byte("the user's\n"), 0o644)
			stage, err := os.MkdirTemp(w.base, "stage-")
			if err != nil {
				w.t.Fatal(err)
			}
			for _, p := range []string{repo, stage} {
				filepath.WalkDir(p, func(q string, _ fs.DirEntry, err error) error {
					if err == nil {
						os.Lchown(q, w.uid, w.gid)
					}
					return nil
				})
			}
			os.Chmod(stage, 0o700)
			r.Stage = stage
		},
		escaped: func(w *world, o outcome) bool {
			_, err := os.Lstat(filepath.Join(w.work, dir, planted))
			return err == nil
		},
		cleanup: func(w *world, o outcome) { os.RemoveAll(filepath.Join(w.work, dir)) },
	}
}

// privateKeyPresent: the machine has a private TLS key for the attack to
// read.
func privateKeyPresent(*world) string {
	for _, pattern := range []string{"/etc/ssl/private/*", "/etc/pki/tls/private/*"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return ""
		}
	}
	return "no private TLS key on this machine"
}

// secretXattr gives the secret file an extended attribute, where its file
// system takes one.
func secretXattr(w *world) string {
	if err := unix.Setxattr(w.secret, "user.skillhost", []byte(w.token("xattr")), 0); err != nil {
		return "the file system of the test's files takes no user extended attributes: " + err.Error()
	}
	return ""
}

// listmountWorks: the kernel has listmount(2) (6.8 and later).
func listmountWorks(*world) string {
	req := struct {
		size, spare  uint32
		mntID, param uint64
	}{size: 24, mntID: ^uint64(0)}
	var buf [16]uint64
	_, _, errno := unix.Syscall6(458, uintptr(unsafe.Pointer(&req)), uintptr(unsafe.Pointer(&buf[0])), 16, 0, 0, 0)
	if errno != 0 {
		return "listmount(2) is not available here: " + errno.Error()
	}
	return ""
}

// world is one user's playground: files, grants and listeners.
type world struct {
	t           *testing.T
	base        string // everything lives here
	home        string // fake $HOME holding .ssh/id_rsa
	secret      string
	work        string    // the granted fs_write directory
	cwd         string    // the host's working directory, not granted
	owned       string    // a 0600 file of the script's user, outside the grant
	uid, gid    int       // the script's user
	victim      *exec.Cmd // a process of the script's user, outside the sandbox
	victimPrio  int
	victimCPUs  int
	victimFiles string // its open files limits, as /proc shows them
	skill       string
	backend     Backend // under test
	control     Backend // unconfined
	claims      shared.Enforcement
	isolation   shared.Isolation
	strict      bool // EscapeConfig.Strict
	name        string
	null        *pluginclient.Conn

	env []string // listener addresses etc.

	nonce     string    // this world's, in every token it plants
	pluginEnv []string  // per plugin, a line of its environment the script is not given
	listener  *exec.Cmd // a process outside the sandbox that records the signals it gets
	signals   string    // the file it records them in
	ownedTime unix.Timespec

	// heard counts, per listener ("tcp", "udp", "dns", "unix",
	// "abstract"), what reached it since the last reset.
	heardMu sync.Mutex
	heardN  map[string]int
}

func newWorld(t *testing.T, cfg EscapeConfig, cred *syscall.Credential) *world {
	base, err := os.MkdirTemp("", "skillhost-escape-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	w := &world{t: t, base: base, nonce: nonce(), heardN: map[string]int{}}
	w.home = w.dir("home", 0o755)
	w.secret = filepath.Join(w.dir("secret", 0o755), "data.txt")
	w.work = w.dir("work", 0o777)
	w.cwd = w.dir("cwd", 0o755)
	w.dir("outside", 0o777)
	w.dir("x", 0o777)
	w.dir("xy", 0o777)
	w.skill = w.dir("skill", 0o755)
	w.dir("skill/scripts", 0o777)
	w.dir("skill/references", 0o755)
	w.dir("home/.ssh", 0o755)
	w.file("home/.ssh/id_rsa", "-----BEGIN FAKE TEST KEY-----\n"+w.token("ssh-key")+"\n", 0o644)
	w.file("home/notes-"+w.token("home"), "", 0o644)
	w.file("secret/data.txt", "top secret "+w.token("secret")+"\n", 0o644)
	w.file("secret/linkable.txt", "linkable secret "+w.token("linkable")+"\n", 0o666) // protected_hardlinks wants rw for non-owners
	w.file("cwd/cwd-file.txt", "host cwd "+w.token("cwd")+"\n", 0o644)
	w.file("skill/SKILL.md", "---\nname: skill\ndescription: escape suite\n---\n", 0o644)
	if err := os.Symlink(w.secret, filepath.Join(w.skill, "references", "leak")); err != nil {
		t.Fatal(err)
	}
	// A link whose target is the secret (lock files and tokens live so).
	if err := os.Symlink(w.token("link"), filepath.Join(w.base, "secret", "token-link")); err != nil {
		t.Fatal(err)
	}
	// A granted path that is a symlink by the time the run starts, as if a
	// concurrent run had swapped the directory the host resolved.
	if err := os.Symlink(filepath.Dir(w.secret), filepath.Join(base, "swap")); err != nil {
		t.Fatal(err)
	}
	w.uid, w.gid = os.Geteuid(), os.Getegid()
	if cred != nil {
		w.uid, w.gid = int(cred.Uid), int(cred.Gid)
	}
	w.dir("owned", 0o755)
	w.owned = filepath.Join(base, "owned", "victim")
	w.file("owned/victim", "mine\n", 0o600)
	os.Chown(w.owned, w.uid, w.gid)
	w.startVictim(cred)
	w.startListener(cred)
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	w.listen()

	w.backend = cfg.Launch(t, cred)
	w.control = cfg.Control(t, cred)
	info, err := w.backend.Info(context.Background())
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	w.claims = info.Enforces
	w.isolation = info.Isolation
	w.strict = cfg.Strict
	w.name = info.Name
	t.Logf("%s backend declares isolation %+v", info.Name, info.Isolation)
	w.pluginEnv = []string{w.secretOfEnv(w.backend.Pid()), w.secretOfEnv(w.control.Pid())}
	w.pluginEnv = slices.DeleteFunc(w.pluginEnv, func(s string) bool { return s == "" })
	p, err := w.backend.Probe(context.Background())
	if err != nil || p.Status != shared.Healthy {
		t.Skipf("the %s backend cannot confine here: %v %+v", info.Name, err, p)
	}
	t.Logf("%s backend: %s", info.Name, p.Reason)
	return w
}

func (w *world) dir(rel string, mode os.FileMode) string {
	p := filepath.Join(w.base, rel)
	if err := os.MkdirAll(p, mode); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) file(rel, content string, mode os.FileMode) {
	p := filepath.Join(w.base, rel)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		w.t.Fatal(err)
	}
}

// listen starts the loopback servers attacks try to reach.
func (w *world) listen() {
	t := w.t
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			w.hear("tcp")
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			if n > 0 {
				w.hear("udp")
			}
		}
	}()
	dns, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	go serveDNS(dns, func() { w.hear("dns") })
	sockDir := w.dir("sockets", 0o755)
	unixPath := filepath.Join(sockDir, "outside.sock")
	unixL, err := net.Listen("unix", unixPath)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(unixPath, 0o777)
	t.Cleanup(func() { unixL.Close() })
	go serveHello(unixL, func() { w.hear("unix") })
	abstract := "skillhost-test-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(w.base)
	absL, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { absL.Close() })
	go serveHello(absL, func() { w.hear("abstract") })
	secretName := EnvHostSecret
	w.env = []string{
		"BASE=" + w.base, "SECRET=" + w.secret, "WORK=" + w.work, "SKILL_DIR=" + w.skill,
		"TCP_PORT=" + port(tcp.Addr()), "UDP_PORT=" + port(udp.LocalAddr()), "DNS_PORT=" + port(dns.LocalAddr()),
		"UNIX_SOCK=" + unixPath, "ABSTRACT_SOCK=" + abstract, "SECRET_NAME=" + secretName,
		"OWNED=" + filepath.Join(w.base, "owned", "victim"),
	}
}

func port(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// serveHello greets each connection, after calling heard.
func serveHello(l net.Listener, heard func()) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		heard()
		c.Write([]byte("hello"))
		c.Close()
	}
}

// serveDNS answers every A query with 192.0.2.1.
func serveDNS(pc net.PacketConn, heard func()) {
	buf := make([]byte, 512)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if n < 12 {
			continue
		}
		heard()
		resp := append([]byte{}, buf[:n]...)
		binary.BigEndian.PutUint16(resp[2:], 0x8180) // response, no error
		binary.BigEndian.PutUint16(resp[6:], 1)      // one answer
		resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1)
		pc.WriteTo(resp, addr)
	}
}

func (w *world) hear(kind string) {
	w.heardMu.Lock()
	w.heardN[kind]++
	w.heardMu.Unlock()
}

// heard returns a check that the listener kind got a connection, a
// datagram or a query during the run. What the run sent may still be on
// its way to the listener's goroutine when the run ends: it waits a
// little for it.
func heard(kind string) func(*world, outcome) bool {
	return func(w *world, _ outcome) bool {
		deadline := time.Now().Add(500 * time.Millisecond)
		for {
			w.heardMu.Lock()
			n := w.heardN[kind]
			w.heardMu.Unlock()
			if n > 0 || time.Now().After(deadline) {
				return n > 0
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func (w *world) resetHeard() {
	w.heardMu.Lock()
	clear(w.heardN)
	w.heardMu.Unlock()
}

// request builds the base request of an attack: read nothing extra, write
// only $WORK, no network, tight limits, cwd outside the grant.
func (w *world) request(a attack, conn Backend, run string) shared.Request {
	script := filepath.Join(w.skill, "scripts", "attack")
	argv := []string{"/bin/bash", script}
	if a.python {
		argv = []string{"/usr/bin/python3", script}
	}
	env := append([]string{
		"PATH=/usr/bin:/bin", "HOME=" + w.home, "RUN=" + run,
		"PLUGIN_PID=" + strconv.Itoa(conn.Pid()), "PLUGIN_SOCKET_DIR=" + conn.SocketDir(),
		"VICTIM_PID=" + strconv.Itoa(w.victim.Process.Pid), "LISTENER_PID=" + strconv.Itoa(w.listener.Process.Pid),
	}, w.env...)
	r := shared.Request{
		RunID:       run,
		Argv:        argv,
		Dir:         w.cwd,
		Env:         env,
		Grant:       shared.Grant{FSWrite: []string{w.work}, Timeout: 15 * time.Second, Trust: shared.TrustExternal},
		SkillDir:    w.skill,
		OutputLimit: 1 << 20,
		KillGrace:   500 * time.Millisecond,
		Limits:      shared.Limits{OpenFiles: 256, FileSize: 1 << 20, Processes: 256, Memory: 1 << 30},
	}
	if a.prepare != nil {
		a.prepare(w, &r)
	}
	return r
}

func (w *world) writeScript(a attack) {
	content := a.script
	if !a.python {
		content = "#!/bin/bash\n" + content + "\n"
	}
	w.file("skill/scripts/attack", content, 0o755)
	w.resetVictim()
	// Every run starts from an empty work directory.
	entries, _ := os.ReadDir(w.work)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(w.work, e.Name()))
	}
	w.resetHeard()
	os.WriteFile(w.signals, nil, 0o666)
	var st unix.Stat_t
	if unix.Stat(w.owned, &st) == nil {
		w.ownedTime = st.Ctim
	}
}

// execute runs req under conn; a's watch, if any, sees each line of its
// output as it streams.
func (w *world) execute(conn Backend, req shared.Request, a attack) outcome {
	var watch func(string) bool
	if a.watch != nil {
		watch = func(line string) bool { return a.watch(w, req.RunID, line) }
	}
	return executeOn(conn, req, watch)
}

// executeOn runs req under b, keeping its output and how long it took,
// and calling watch (if not nil) with each complete line as it arrives:
// the outcome is seen if watch ever reported the effect.
func executeOn(b Backend, req shared.Request, watch func(line string) bool) outcome {
	var mu sync.Mutex
	var buf bytes.Buffer
	seen, scanned := false, 0
	start := time.Now()
	res, err := b.Execute(context.Background(), req, func(chunk []byte) error {
		mu.Lock()
		defer mu.Unlock()
		buf.Write(chunk)
		for watch != nil {
			i := bytes.IndexByte(buf.Bytes()[scanned:], '\n')
			if i < 0 {
				break
			}
			line := strings.TrimSpace(string(buf.Bytes()[scanned : scanned+i]))
			scanned += i + 1
			seen = watch(line) || seen
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	return outcome{run: req.RunID, out: buf.String(), res: res, err: err, took: time.Since(start), seen: seen}
}

// direct runs the attack with nothing but os/exec: no process group, no
// supervisor, no deadline. It returns after the script's own process ends
// or after a few seconds, whichever comes first, leaving anything else
// running for the check to find.
func (w *world) direct(req shared.Request, cred *syscall.Credential) outcome {
	// The script runs under a shell of its own, which plays the part of the
	// supervisor it would have (its $PPID): an attack on its parent must
	// hit that, never the test binary.
	cmd := exec.Command("/bin/sh", append([]string{"-c", `"$@"; exit $?`, "sh"}, req.Argv...)...)
	cmd.Dir, cmd.Env = req.Dir, req.Env
	// A group of its own, so that what the control leaves behind (other
	// than the setsid escapee the attack is about, which cleanup kills)
	// can be reaped without touching the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.WaitDelay = time.Second // an escapee holding the output pipe must not hang the test
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return outcome{run: req.RunID, err: err}
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
	time.Sleep(200 * time.Millisecond) // let a detached process settle
	o := outcome{run: req.RunID, out: buf.String(), took: time.Since(start)}
	select {
	case <-done:
	default:
		o.took = 9 * time.Second // still running: past any deadline the runner would have enforced
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return o
}

// syncBuffer is a bytes.Buffer safe for the copying goroutines of os/exec
// and a concurrent reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func fileExists(rel string) func(*world, outcome) bool {
	return func(w *world, _ outcome) bool { return exists(filepath.Join(w.base, rel)) }
}

func removeFile(rel string) func(*world, outcome) {
	return func(w *world, _ outcome) { os.Remove(filepath.Join(w.base, rel)) }
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func mentioned(out, prefix string) []string {
	var paths []string
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			paths = append(paths, strings.TrimSpace(rest))
		}
	}
	return paths
}

func mentionedExists(out, prefix string) bool {
	for _, p := range mentioned(out, prefix) {
		if exists(p) {
			return true
		}
	}
	return false
}

func removeMentioned(out, prefix string) {
	for _, p := range mentioned(out, prefix) {
		if strings.HasPrefix(p, "/tmp/") {
			os.Remove(p)
		}
	}
}

// escapees lists the live processes a run named escapee-<run>.
func escapees(run string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if !bytes.Contains(cmdline(e.Name()), []byte("escapee-"+run)) || runner.Gone(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// cmdline reads a process's command line. That of a process whose first
// thread ended is empty, so it is read from one of the threads left.
func cmdline(pid string) []byte {
	cmd, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil || len(cmd) > 0 {
		return cmd
	}
	tasks, _ := os.ReadDir("/proc/" + pid + "/task")
	for _, t := range tasks {
		if c, err := os.ReadFile("/proc/" + pid + "/task/" + t.Name() + "/cmdline"); err == nil && len(c) > 0 {
			return c
		}
	}
	return nil
}

// escapeesAlive reports whether any process of the run is still alive a
// moment after the run ended.
func escapeesAlive(_ *world, o outcome) bool {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if len(escapees(o.run)) == 0 {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// firstThreadEndedAlive: a process of the run whose first thread alone has
// ended is alive a moment after the run ended. Its control thus shows that
// the trick worked; a survivor that stayed a plain process is the setsid
// attacks' to catch.
func firstThreadEndedAlive(w *world, o outcome) bool {
	if !escapeesAlive(w, o) {
		return false
	}
	for _, pid := range escapees(o.run) {
		// escapees lists no ended process: a zombie here has threads left.
		if st, err := procstat.Read(pid); err == nil && st.State == 'Z' {
			return true
		}
	}
	return false
}

// lateAfter is when a run with a 2 s timeout and a 0.1 s grace counts as
// late: the promise is timeout + grace + 1 s; 4 s more are headroom for a
// busy 2-core machine, where every process in the teardown chain waits for
// a CPU (on a quiet one these runs return in about 2.3 s). The failure this
// guards against took 10-11 s, or never ended.
const lateAfter = 2*time.Second + 100*time.Millisecond + time.Second + 4*time.Second

// late: the call returned after lateAfter, and nothing of the run is left.
func late(o outcome) bool { return o.took > lateAfter && len(escapees(o.run)) == 0 }

// outlivedOrLate: processes survived the run, or the call returned late.
func outlivedOrLate(w *world, o outcome) bool {
	return len(escapees(o.run)) > 0 || o.took > lateAfter
}

func killEscapees(_ *world, o outcome) {
	for range 50 {
		pids := escapees(o.run)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func modeOf(p string) os.FileMode {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Mode().Perm()
}

func mtimeYear(p string) int {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.ModTime().Year()
}

// resetOwned puts the owned file back as it was: 0600, the user's, no
// extended attribute, a current time.
func resetOwned(w *world, _ outcome) {
	os.Chmod(w.owned, 0o600)
	os.Chown(w.owned, w.uid, w.gid)
	syscall.Removexattr(w.owned, "user.skillhost")
	now := time.Now()
	os.Chtimes(w.owned, now, now)
}

// setIDFileIn reports whether any file under rel has a set-uid or set-gid
// bit.
func setIDFileIn(rel string) func(*world, outcome) bool {
	return func(w *world, _ outcome) bool {
		found := false
		filepath.Walk(filepath.Join(w.base, rel), func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
				found = true
			}
			return nil
		})
		return found
	}
}

// startVictim starts a process of the script's user outside any sandbox,
// for the scheduling attacks to aim at.
func (w *world) startVictim(cred *syscall.Credential) {
	cmd := exec.Command("sleep", "600")
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.victim = cmd
	w.victimPrio, _ = unix.Getpriority(unix.PRIO_PROCESS, cmd.Process.Pid)
	w.victimFiles = openFilesLimit(cmd.Process.Pid)
	var set unix.CPUSet
	if unix.SchedGetaffinity(cmd.Process.Pid, &set) == nil {
		w.victimCPUs = set.Count()
	}
	w.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}

// victimTouched reports whether the victim's nice value, CPU affinity or
// scheduling policy changed.
func (w *world) victimTouched() bool {
	pid := w.victim.Process.Pid
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
	if err == nil && prio != w.victimPrio {
		w.t.Logf("victim's priority: %d, was %d", prio, w.victimPrio)
		return true
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(pid, &set) == nil && set.Count() != w.victimCPUs {
		w.t.Logf("victim's CPUs: %d, was %d", set.Count(), w.victimCPUs)
		return true
	}
	policy, _, errno := unix.Syscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0)
	if errno == 0 && policy != 0 {
		w.t.Logf("victim's scheduling policy: %d", policy)
		return true
	}
	return false
}

func (w *world) resetVictim() {
	pid := w.victim.Process.Pid
	unix.Setpriority(unix.PRIO_PROCESS, pid, 20-w.victimPrio) // the raw value is 20 - nice
	if f := strings.Fields(w.victimFiles); len(f) == 2 {
		// Raising a hard limit back takes CAP_SYS_RESOURCE; without it
		// the victim keeps what the control set, which no other attack
		// reads.
		soft, _ := strconv.ParseUint(f[0], 10, 64)
		hard, _ := strconv.ParseUint(f[1], 10, 64)
		unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: soft, Max: hard}, nil)
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		unix.SchedSetaffinity(pid, &set)
	}
	type schedParam struct{ priority int32 }
	p := schedParam{}
	unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), 0, uintptr(unsafe.Pointer(&p)))
	unix.Syscall(unix.SYS_IOPRIO_SET, 1, uintptr(pid), 0)
}

// suiteUser is a user the suites run as: nil credentials for the test's own.
type suiteUser struct {
	name string
	cred *syscall.Credential
}

// suiteUsers are the test's own user and, when that is root, nobody.
func suiteUsers() []suiteUser {
	users := []suiteUser{{name: "uid" + strconv.Itoa(os.Geteuid())}}
	if os.Geteuid() == 0 {
		users = append(users, suiteUser{name: "nobody", cred: &syscall.Credential{Uid: 65534, Gid: 65534}})
	}
	return users
}

// Escapes runs every attack whose claim the backend makes, as the current
// user and, when that is root, as nobody. Each must fail under the backend
// and succeed under the control (or a plain exec, for attacks on process
// lifetime).
func Escapes(t *testing.T, cfg EscapeConfig) {
	users := suiteUsers()
	_, pyErr := os.Stat("/usr/bin/python3")
	secret := os.Getenv(EnvHostSecret)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			w := newWorld(t, cfg, u.cred)
			w.canary(t)
			for i, a := range attacks {
				t.Run(a.name, func(t *testing.T) {
					if cfg.Only != nil && !cfg.Only(a.name) {
						t.Skip("not picked")
					}
					if !a.claim.claimedBy(w.claims) {
						t.Skipf("the %s backend does not claim %s", w.name, a.claim)
					}
					if a.python && pyErr != nil {
						t.Skip("needs /usr/bin/python3")
					}
					if a.rootOnly && (u.cred != nil || os.Geteuid() != 0) {
						t.Skip("the control needs root")
					}
					if a.notRoot && u.cred == nil && os.Geteuid() == 0 {
						t.Skip("as root, the control would reach every root process on the machine")
					}
					if a.needsSecret && secret == "" {
						t.Skipf("needs %s in the test's environment from its start", EnvHostSecret)
					}
					if a.requires != nil {
						if why := a.requires(w); why != "" {
							t.Skip(why)
						}
					}
					if why := w.insideOnly(a); why != "" {
						t.Skip(why)
					}
					escaped := a.escaped
					if escaped == nil {
						escaped = marker
					}
					// The world's nonce keeps run names, and so the escapees
					// looked for by name, apart from another suite's running
					// beside this one (go test runs packages in parallel).
					run := fmt.Sprintf("%s-%d-%s", u.name, i, w.nonce)

					w.writeScript(a)
					o := w.execute(w.backend, w.request(a, w.backend, run+"-confined"), a)
					// Lateness alone (nothing left behind) may be a busy
					// machine's: such a run is tried twice more, and only a
					// run late every time counts.
					for try := 1; try < 3 && o.err == nil && escaped(w, o) && late(o); try++ {
						t.Logf("try %d returned after %v with nothing left behind; trying again", try, o.took)
						w.writeScript(a)
						o = w.execute(w.backend, w.request(a, w.backend, fmt.Sprintf("%s-confined%d", run, try)), a)
					}
					if o.err != nil && !a.mayRefuse {
						t.Fatalf("%s run failed to start: %v", w.name, o.err)
					}
					if escaped(w, o) {
						t.Errorf("ESCAPE under %s: %+v\n%s", w.name, o.res, o.out)
					}
					if a.cleanup != nil {
						a.cleanup(w, o)
					}
					confined := o

					// A control that does not escape may just have been slow
					// on a busy machine (a process not started yet): it gets
					// three tries before the attack is called broken.
					var c outcome
					for try := range 3 {
						w.writeScript(a)
						switch a.control {
						case viaNull:
							c = w.execute(w.control, w.request(a, w.control, fmt.Sprintf("%s-control%d", run, try)), a)
						case viaDirect:
							c = w.direct(w.request(a, w.control, fmt.Sprintf("%s-direct%d", run, try)), u.cred)
						}
						ok := escaped(w, c)
						if a.cleanup != nil {
							a.cleanup(w, c)
						}
						if ok {
							break
						}
						if try == 2 {
							t.Errorf("control: the attack does not work even unconfined, so it proves nothing (err %v, %+v)\n%s", c.err, c.res, c.out)
						}
					}
					t.Logf("%s: exit %d %s, violations %v | control escaped", w.name, confined.res.ExitCode, confined.res.Signal, kinds(confined.res.Violations))
				})
			}
		})
	}
}

func kinds(vs []shared.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Kind+":"+v.Target)
	}
	return out
}

// Teardown repeats the attacks on the teardown itself (a fork bomb of
// setsid'd processes that ignore SIGTERM, and a script that tries to starve
// its supervisor) rounds times under the backend, as the current user and,
// when that is root, as nobody: every run must return within timeout +
// grace + 1 s (plus headroom for a busy machine, see lateAfter) and leave
// no process behind. Escapes proves each attack works unconfined.
func Teardown(t *testing.T, cfg EscapeConfig, rounds int) {
	var picked []attack
	for _, a := range attacks {
		if strings.HasPrefix(a.name, "a fork bomb of setsid") || strings.HasPrefix(a.name, "starve the supervisor") {
			picked = append(picked, a)
		}
	}
	if len(picked) != 2 {
		t.Fatalf("found %d of the 2 teardown attacks", len(picked))
	}
	users := []*syscall.Credential{nil}
	if os.Geteuid() == 0 {
		users = append(users, &syscall.Credential{Uid: 65534, Gid: 65534})
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	for _, cred := range users {
		name := "uid" + strconv.Itoa(os.Geteuid())
		if cred != nil {
			name = "nobody"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, cfg, cred)
			for _, a := range picked {
				t.Run(a.name, func(t *testing.T) {
					var worst time.Duration
					for i := range rounds {
						w.writeScript(a)
						o := w.execute(w.backend, w.request(a, w.backend, fmt.Sprintf("teardown-%s-%s-%d", w.nonce, name, i)), a)
						for try := 1; try < 3 && o.err == nil && late(o); try++ {
							t.Logf("round %d, try %d returned after %v with nothing left behind; trying again", i, try, o.took)
							w.writeScript(a)
							o = w.execute(w.backend, w.request(a, w.backend, fmt.Sprintf("teardown-%s-%s-%d-%d", w.nonce, name, i, try)), a)
						}
						if o.err != nil {
							t.Fatalf("round %d: %v", i, o.err)
						}
						worst = max(worst, o.took)
						if left := escapees(o.run); len(left) > 0 {
							killEscapees(w, o)
							t.Errorf("round %d left %d processes behind", i, len(left))
						}
						if outlivedOrLate(w, o) {
							t.Errorf("round %d returned after %v (timeout 2 s, grace 0.1 s)", i, o.took)
						}
						if !o.res.TimedOut {
							t.Errorf("round %d: not reported as timed out: %+v\n%s", i, o.res, o.out)
						}
					}
					t.Logf("%d rounds, slowest return %v", rounds, worst)
				})
			}
		})
	}
}

// canary runs a harmless script in the attacks' request (the working
// directory outside the grant, the limits, the environment) and fails the
// suite unless it ran: a backend that cannot start the command there
// would pass every attack for the wrong reason.
func (w *world) canary(t *testing.T) {
	t.Helper()
	a := attack{name: "canary", script: `echo "canary $RUN in $(pwd)"`}
	w.writeScript(a)
	run := "canary-" + w.nonce
	o := w.execute(w.backend, w.request(a, w.backend, run), a)
	if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.out, "canary "+run+" in "+w.cwd) {
		t.Fatalf("the %s backend does not run a harmless script in the attacks' request (working directory %s, outside the grant), so no attack would prove anything: err %v, %+v\n%s",
			w.name, w.cwd, o.err, o.res, o.out)
	}
}

// insideOnly says why an attack's effect stays inside the run for this
// backend, by its declared isolation, or "" when it does not: the backend
// shares with the host the namespace the attack reaches into, for the
// attack's grant.
func (w *world) insideOnly(a attack) string {
	if a.inside == nil || w.strict {
		return ""
	}
	ns := a.inside.of(w.isolation)
	var g shared.Grant
	if a.prepare != nil {
		r := shared.Request{}
		a.prepare(w, &r)
		g = r.Grant
	}
	if !ns.For(g) {
		return ""
	}
	return fmt.Sprintf("inside-only for the %s backend: it declares Info.Isolation %s namespace %s, and in it %s",
		w.name, a.inside.name, ns, a.inside.why)
}

// nonce is a random word, unique to a world.
func nonce() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// token is what the harness plants as name in this world: a script can
// print it only by reading it from where it was planted.
func (w *world) token(name string) string { return name + "-" + w.nonce }

// hexHead is the first n bytes of the file at path in hex, as od prints
// them with the spaces removed, or "" when it cannot be read or is empty.
func hexHead(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, n)
	k, _ := io.ReadFull(f, b)
	return hex.EncodeToString(b[:k])
}

// privateKeys lists the machine's private TLS keys.
func privateKeys() []string {
	var out []string
	for _, pattern := range []string{"/etc/ssl/private/*", "/etc/pki/tls/private/*"} {
		m, _ := filepath.Glob(pattern)
		out = append(out, m...)
	}
	return out
}

// hostSecretLeaked: the output holds the value of EnvHostSecret, which the
// script is not given.
func hostSecretLeaked(_ *world, o outcome) bool {
	s := os.Getenv(EnvHostSecret)
	return s != "" && strings.Contains(o.out, s)
}

// secretOfEnv is the longest line (at least 24 bytes) of the environment
// of process pid that appears nowhere in what a script is given, or "".
func (w *world) secretOfEnv(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	given := strings.Join(w.env, "\n")
	best := ""
	for _, line := range strings.FieldsFunc(string(data), func(r rune) bool { return r == 0 || r == '\n' }) {
		if len(line) >= 24 && len(line) > len(best) && !strings.Contains(given, line) && !strings.HasPrefix(line, "PATH=") {
			best = line
		}
	}
	return best
}

// shmOf is the id of the System V shared memory segment in the harness's
// (the host's) IPC namespace whose key the attack derives from run, or -1.
func shmOf(run string) int {
	key := strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(run))&0x7fffffff), 10)
	data, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] == key {
			if id, err := strconv.Atoi(f[1]); err == nil {
				return id
			}
		}
	}
	return -1
}

// dialBack dials, from the host's network namespace, the loopback port a
// LISTENING line names, and reports whether what answers is the run (it
// sends its id).
func dialBack(_ *world, run, line string) bool {
	p, ok := strings.CutPrefix(line, "LISTENING ")
	if !ok {
		return false
	}
	c, err := net.DialTimeout("tcp4", net.JoinHostPort("127.0.0.1", strings.TrimSpace(p)), 2*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(c)
	return string(got) == run
}

// startListener starts a process of the script's user outside any
// sandbox that appends a line to w.signals for each SIGUSR1 it gets.
func (w *world) startListener(cred *syscall.Credential) {
	w.signals = filepath.Join(w.dir("signals", 0o777), "got")
	w.file("signals/got", "", 0o666)
	cmd := exec.Command("/bin/bash", "-c", `trap 'echo got >> "$0"' USR1; while :; do sleep 1 & wait $!; done`, w.signals)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.listener = cmd
	w.t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
}

// signalled: the listener recorded a signal since the last reset.
func (w *world) signalled() bool {
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		fi, err := os.Stat(w.signals)
		if (err == nil && fi.Size() > 0) || time.Now().After(deadline) {
			return err == nil && fi.Size() > 0
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// victimTraced: the victim has a tracer now.
func (w *world) victimTraced() bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(w.victim.Process.Pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return false
}

// ownedLeased: a writer of the owned file that may not wait is turned
// away, which only a lease does.
func (w *world) ownedLeased() bool {
	fd, err := unix.Open(w.owned, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err == unix.EWOULDBLOCK
}

// ownedChanged: the owned file's inode changed (its ctime) since the run
// started.
func (w *world) ownedChanged() bool {
	var st unix.Stat_t
	return unix.Stat(w.owned, &st) == nil && st.Ctim != w.ownedTime
}

// openFilesLimit is the soft and hard open files limits of process pid as
// /proc/<pid>/limits shows them (anyone may read it), or "".
func openFilesLimit(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) >= 2 {
				return f[0] + " " + f[1]
			}
		}
	}
	return ""
}

// onAMD64: the attack's machine code is x86-64's.
func onAMD64(*world) string {
	if runtime.GOARCH != "amd64" {
		return "the attack injects an x86-64 system call; this is " + runtime.GOARCH
	}
	return ""
}
