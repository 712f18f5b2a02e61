"""The per-run supervisor, and the process-tree walk it shares with the
plugin. Standard library only, and no relative imports: the plugin runs
this file as a fresh interpreter (never a fork of its own multi-threaded,
gRPC-holding process) and also imports it for kill_tree.

A supervisor lives for one command. It marks itself a child subreaper, so
every descendant the command orphans, setsid'd or not, is re-parented to it
rather than to init and stays findable by walking /proc from its pid. It
starts the command in a process group of its own, forwards SIGTERM to every
descendant when it gets one (the plugin sends it at the deadline or on
cancellation), and once the command has exited kills whatever is left of
the tree, round after round, until nothing is, and reaps it all. Only then
does it report the command's status.

Its descriptors, from the plugin:
  0          the spec, a JSON document, read to EOF
  1          the write end of the command's merged output (never written here)
  2          the plugin's stderr (a traceback, should there be one)
  argv[1]    the lifeline's read end: EOF means kill everything and exit,
             without a status (the grace after SIGTERM is over, or the
             plugin died)
  argv[2]    the status pipe: JSON lines, {"pid": pid, "start_time": t} of the
             command, then {"started": true} or {"setup_error": msg}, then
             {"exit_code": n, "signal": s} or {"error": msg}

The spec carries bytes as latin-1 text, which maps each byte to one code
point and back: {"argv": [...], "env": [[name, value], ...], "cwd": "..."}.
"""

import json
import os
import signal
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_TERMINATING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return "signal %d" % num


def _stat(pid):
    """(ppid, ended) of pid from /proc/<pid>/stat, or None once it is gone:
    ENOENT when it was reaped before the open, ESRCH when it was reaped
    between the open and the read (common in a tree that churns processes;
    taking it for a failure would let a fork bomb stall every walk)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name is in parentheses and may itself hold ") ", so the
    # fields start after the last ')'.
    i = data.rfind(b")")
    fields = data[i + 2 :].split() if i >= 0 else []
    if len(fields) < 18:
        raise OSError("/proc/%d/stat: malformed" % pid)
    return int(fields[1]), _ended(fields)


def _ended(fields):
    """Whether a stat line's fields (after the name) say the process has
    ended: its first thread is a zombie and no other thread is left. The
    state letter alone does not say so: a first thread that ended on its
    own (the exit system call) shows as a zombie while the others run on."""
    return fields[0][:1] in (b"Z", b"X") and int(fields[17]) <= 1


def start_time(pid):
    """When pid started, in clock ticks since boot (/proc/<pid>/stat field
    22), or None once it is gone. With the pid it names one process for
    good: a reused pid has a later start."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    if len(fields) < 20 or _ended(fields):
        return None
    return int(fields[19])


def descendants(root):
    """The live descendants of root, found by walking the parent links of
    every process in /proc (a process whose first thread alone ended is
    live, see _ended)."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        st = _stat(pid)
        if st is None or st[1]:
            continue  # gone meanwhile, or ended
        children.setdefault(st[0], []).append(pid)
    out = []
    queue = [root]
    while queue:
        for c in children.get(queue.pop(), ()):
            out.append(c)
            queue.append(c)
    return out


def _childless(root):
    """True when root has no children left (from /proc/<root>/task/*/children),
    None where the kernel lacks those files. A subreaper adopts every orphan
    of its tree, so no children means no descendants at all."""
    try:
        for tid in os.listdir("/proc/%d/task" % root):
            with open("/proc/%d/task/%s/children" % (root, tid), "rb") as f:
                if f.read().strip():
                    return False
    except OSError:
        return None
    return True


def reap():
    """Collects every exited child without blocking."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def signal_tree(root, sig):
    """Sends sig to every live descendant of root."""
    try:
        pids = descendants(root)
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def kill_tree(root, reap_children=False):
    """Kills every descendant of root until none is left alive. Each round
    kills every process that exists at its start, so even a fork bomb runs
    out of live parents. With reap_children it also collects root's exited
    children, which only the process root itself may ask for."""
    for rnd in range(1000):
        if reap_children:
            reap()
        if _childless(root):
            return  # the common case, answered without walking /proc
        try:
            pids = descendants(root)
        except OSError:
            # /proc is unreadable (descriptors exhausted, say): make room to
            # look again rather than give up.
            try:
                import resource

                resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
            except (ImportError, OSError, ValueError):
                pass
            time.sleep(0.001)
            continue
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if rnd > 10:
            time.sleep(0.001)


def _subreaper():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    one, zero = ctypes.c_ulong(1), ctypes.c_ulong(0)
    if libc.prctl(ctypes.c_int(PR_SET_CHILD_SUBREAPER), one, zero, zero, zero) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "become a child subreaper: " + os.strerror(err))


def _spec():
    data = b""
    while True:
        b = os.read(0, 1 << 16)
        if not b:
            break
        data += b
    spec = json.loads(data)

    def raw(s):
        return s.encode("latin-1")

    return (
        [raw(a) for a in spec["argv"]],
        {raw(k): raw(v) for k, v in spec["env"]},
        raw(spec["cwd"]) if spec.get("cwd") else None,
    )


def _fork_command(argv, env, cwd):
    """Forks the command, which waits at a gate before it execs: in a
    process group of its own (a kill or renice of "my group" by the command
    never reaches the supervisor), stdin on /dev/null, stdout and stderr on
    the output pipe, default signal dispositions, nothing else open.
    Returns its pid, the write end of its gate and the read end of its
    error pipe."""
    gate_r, gate_w = os.pipe()
    err_r, err_w = os.pipe()  # close-on-exec: EOF without data means exec'd
    pid = os.fork()
    if pid == 0:
        try:
            for s in _TERMINATING + (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(s, signal.SIG_DFL)
            os.setpgid(0, 0)
            os.close(gate_w)
            if os.read(gate_r, 1) != b"x":
                os._exit(127)  # the supervisor is gone: do not run at all
            if cwd:
                os.chdir(cwd)
            null = os.open("/dev/null", os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(1, 2)
            os.closerange(3, err_w)
            os.closerange(err_w + 1, 1 << 20)
            os.execvpe(argv[0], argv, env)
        except BaseException as e:  # noqa: BLE001 - reported, then exit
            try:
                os.write(err_w, str(e).encode("utf-8", "replace"))
            finally:
                os._exit(127)
    os.close(gate_r)
    os.close(err_w)
    return pid, gate_w, err_r


def _open_gate(pid, gate_w, err_r):
    """Lets the command exec; returns why it could not, or None."""
    try:
        os.write(gate_w, b"x")
    finally:
        os.close(gate_w)
    msg = b""
    while True:
        b = os.read(err_r, 4096)
        if not b:
            break
        msg += b
    os.close(err_r)
    if not msg:
        return None
    os.waitpid(pid, 0)
    return msg.decode("utf-8", "replace")


def main():
    life_fd, status_fd = int(sys.argv[1]), int(sys.argv[2])
    for fd in (life_fd, status_fd):
        os.set_inheritable(fd, False)  # only the supervisor holds them
    self_pid = os.getpid()

    def report(**fields):
        try:
            os.write(status_fd, (json.dumps(fields) + "\n").encode())
        except OSError:
            pass  # the plugin is gone; the lifeline ends us too

    dying = threading.Event()

    def watch_lifeline():
        while True:
            try:
                if not os.read(life_fd, 512):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        # Nothing may survive the lifeline, and nothing is reported: the
        # plugin calls the command killed.
        dying.set()
        kill_tree(self_pid, reap_children=True)
        reap()
        os._exit(0)

    cmd = []  # the command's pid, once it runs

    def forward(signum, frame):
        if cmd:
            try:
                os.killpg(cmd[0], signal.SIGTERM)
            except OSError:
                pass
        signal_tree(self_pid, signal.SIGTERM)

    for s in _TERMINATING:
        signal.signal(s, forward)

    # Process-directed signals must reach the main thread, where the handler
    # runs and interrupts the wait: the lifeline thread starts with them
    # blocked (a new thread inherits its creator's mask).
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _TERMINATING)
    threading.Thread(target=watch_lifeline, daemon=True).start()
    signal.pthread_sigmask(signal.SIG_SETMASK, old)

    try:
        _subreaper()
        argv, env, cwd = _spec()
    except (OSError, ValueError, KeyError, TypeError) as e:
        report(setup_error="supervisor: %s" % e)
        return

    pid, gate_w, err_r = _fork_command(argv, env, cwd)
    cmd.append(pid)
    # The command waits at its gate until the plugin knows it by pid and
    # start time (read now, while it is an unreaped child): should it kill
    # this supervisor the moment it runs, the plugin can still find it.
    report(pid=pid, start_time=start_time(pid))
    error = _open_gate(pid, gate_w, err_r)
    if error is not None:
        kill_tree(self_pid, reap_children=True)
        report(setup_error=error)
        return
    report(started=True)

    status = {"exit_code": -1, "signal": "SIGKILL"}
    while True:
        try:
            wpid, ws = os.waitpid(-1, 0)
        except ChildProcessError:
            break  # nothing left to wait for
        if wpid == pid:
            if os.WIFSIGNALED(ws):
                status = {"exit_code": -1, "signal": signal_name(os.WTERMSIG(ws))}
            else:
                status = {"exit_code": os.waitstatus_to_exitcode(ws)}
            break
    # Whatever the command left behind goes with it.
    kill_tree(self_pid, reap_children=True)
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    if not dying.is_set():
        report(**status)


if __name__ == "__main__":
    try:
        main()
    except BaseException as e:  # noqa: BLE001 - the plugin must hear of it
        try:
            kill_tree(os.getpid(), reap_children=True)
        finally:
            os.write(int(sys.argv[2]), (json.dumps({"error": "supervisor: %r" % e}) + "\n").encode())
            raise
    os._exit(0)
