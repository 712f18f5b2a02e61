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
  argv[2]    the status pipe: JSON lines, {"started": pid} or
             {"setup_error": msg} first, then {"exit_code": n, "signal": s}
             or {"error": msg}

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
    """(ppid, state) of pid from /proc/<pid>/stat, or None once it is gone:
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
    if len(fields) < 2:
        raise OSError("/proc/%d/stat: malformed" % pid)
    return int(fields[1]), fields[0][:1]


def gone(pid):
    """Whether no process pid runs any more: there is none, or it is a
    zombie."""
    st = _stat(pid)
    return st is None or st[1] in (b"Z", b"X")


def descendants(root):
    """The live (non-zombie) descendants of root, found by walking the
    parent links of every process in /proc."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        st = _stat(pid)
        if st is None or st[1] in (b"Z", b"X"):
            continue  # gone meanwhile, or dead
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

    import subprocess

    try:
        # restore_signals (the default) gives the command the default
        # SIGPIPE and SIGXFSZ that the interpreter changed; the command's
        # process group is its own, so a kill or renice of "my group" by the
        # command never reaches the supervisor.
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=1,
            stderr=1,
            close_fds=True,
            process_group=0,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        kill_tree(self_pid, reap_children=True)
        report(setup_error=str(e))
        return
    cmd.append(proc.pid)
    report(started=proc.pid)

    status = {"exit_code": -1, "signal": "SIGKILL"}
    while True:
        try:
            pid, ws = os.waitpid(-1, 0)
        except ChildProcessError:
            break  # nothing left to wait for
        if pid == proc.pid:
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
