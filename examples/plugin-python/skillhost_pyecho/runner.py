"""Runs one command under the contract's bounds, the way shared/runner does
on Linux:

- each command gets a supervisor of its own (supervisor.py, a fresh
  interpreter): a child subreaper that starts the command in a new process
  group, stdin on /dev/null, stdout and stderr merged into one pipe so
  output keeps its order, and that kills and reaps whatever the command
  leaves behind, setsid'd or not, before it reports the exit status;
- at the deadline (or on cancellation) the supervisor gets SIGTERM and
  forwards it to every descendant; once the kill grace has passed the
  plugin closes the supervisor's lifeline, on which the supervisor kills
  its whole tree and exits;
- should the supervisor not be gone a second later (starved by the command,
  say), the plugin walks the supervisor's tree and kills it, then the
  supervisor: the tree first, because killing the subreaper first would
  hand its descendants to init, out of reach;
- output past the limit is dropped, after one truncation marker, while the
  pipe keeps being drained so the command never blocks on it.

A call therefore returns within timeout + grace + about a second, leaving
no process behind; and if the plugin dies, the cut lifeline ends every
supervisor and its tree.
"""

import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time

from .supervisor import kill_tree, start_time

READ_CHUNK = 32 << 10  # well under the contract's 64 KiB chunk limit
DEFAULT_OUTPUT_LIMIT = 1 << 20
DEFAULT_KILL_GRACE = 2.0
# How long to wait for the end of the output once the supervisor is gone;
# only a process that escaped its tree could still hold the pipe.
DRAIN_WAIT = 0.25
# How long the supervisor has to tear its tree down after the lifeline is
# cut before the plugin does it itself.
BACKSTOP = 1.0
# How long a supervisor may take to start the command (a fresh interpreter
# on a busy machine) before the run counts as failed to start.
START_WAIT = 30.0
# How long a killed orphaned command may take to die before the run ends
# anyway (SIGKILL cannot be refused; only a starved machine delays it).
ORPHAN_WAIT = 5.0
SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervisor.py")
# The supervisor runs under the plugin's own interpreter, isolated (-I: no
# PYTHON* variables, no user site, no script directory on sys.path) and
# without site (-S): it needs only the standard library.
PYTHON = sys.executable or "/usr/bin/python3"


def truncation_marker(limit):
    """The line emitted once when output is cut; the same bytes as the Go
    runner's TruncationMarker."""
    return ("\n[output truncated: exceeded %d bytes]\n" % limit).encode()


class SetupError(Exception):
    """The command could not be started at all."""


class Outcome:
    """How a command ended."""

    def __init__(self):
        self.exit_code = 0
        self.signal = ""
        self.timed_out = False
        self.canceled = False
        self.truncated = False
        self.duration = 0.0
        # error: the supervisor failed after the command started (a bug);
        # the command's tree was killed.
        self.error = ""


def _latin1(b):
    return bytes(b).decode("latin-1")


def _close(*fds):
    for fd in fds:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


class Run:
    """One command. stream() yields its output and fills outcome; cancel()
    may be called from any thread, at any time, more than once; kill()
    ends the run at once (the plugin is shutting down)."""

    def __init__(self, argv, cwd, env, timeout, kill_grace, output_limit):
        if not argv or not argv[0]:
            raise SetupError("empty argv")
        self.argv = argv
        self.cwd = cwd or None
        self.env = env
        self.timeout = timeout
        self.kill_grace = kill_grace if kill_grace > 0 else DEFAULT_KILL_GRACE
        self.limit = output_limit if output_limit != 0 else DEFAULT_OUTPUT_LIMIT
        self.outcome = Outcome()
        self._events = queue.Queue()
        # The reader takes a slot per chunk it queues and stream() gives it
        # back once the chunk is sent: a slow host slows the command down
        # instead of filling this process's memory.
        self._slots = threading.Semaphore(8)
        self._stopping = False
        # Signalling the supervisor or walking its tree, and reaping it,
        # exclude each other, so neither can reach a reused pid.
        self._lock = threading.Lock()
        self._reaped = False
        self._exited = threading.Event()
        self._life_lock = threading.Lock()
        self._lifeline = None  # write end; closing it ends the supervisor
        self._out = None
        self._status = None
        self.proc = None  # the supervisor
        self.pid = 0  # the command
        self._pid_start = None  # and when it started, which pins the pid

    def _spec(self):
        return json.dumps(
            {
                "argv": [_latin1(a) for a in self.argv],
                "env": [[_latin1(k), _latin1(v)] for k, v in self.env.items()],
                "cwd": _latin1(self.cwd) if self.cwd else "",
            }
        ).encode()

    def start(self):
        """Starts the supervisor, hands it the command and returns once the
        command runs; raises SetupError when it could not be started."""
        spec = self._spec()
        out_r, out_w = os.pipe()
        spec_r, spec_w = os.pipe()
        life_r, life_w = os.pipe()
        stat_r, stat_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [PYTHON, "-I", "-S", "-B", SUPERVISOR, str(life_r), str(stat_w)],
                stdin=spec_r,
                stdout=out_w,
                # stderr stays the plugin's: a supervisor's traceback belongs
                # in the host's log, not in the command's output.
                pass_fds=(life_r, stat_w),
                close_fds=True,
                process_group=0,
                cwd="/",
                env={},
            )
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            _close(out_r, spec_w, life_w, stat_r)
            raise SetupError("start supervisor: %s" % e) from e
        finally:
            _close(out_w, spec_r, life_r, stat_w)
        self._out, self._lifeline = out_r, life_w
        # Unbuffered, so that select() on it sees every line still unread.
        self._status = os.fdopen(stat_r, "rb", buffering=0)
        try:
            view = memoryview(spec)
            while view:
                view = view[os.write(spec_w, view) :]
        except OSError:
            pass  # the supervisor died; its status says why, or nothing
        finally:
            os.close(spec_w)
        # The supervisor names the command (pid and start time) before it
        # lets it exec, then says whether the exec worked.
        deadline = time.monotonic() + START_WAIT
        first = None
        while True:
            line = self._status_line(deadline)
            if not isinstance(line, dict) or "pid" not in line:
                first = line
                break
            self.pid, self._pid_start = line["pid"], line.get("start_time")
        # A named command counts as started even when nothing more came (its
        # supervisor died, perhaps killed by the command as it began): the
        # run then ends as any run whose supervisor is gone.
        if not (isinstance(first, dict) and first.get("started") or first is None and self.pid):
            self.kill()
            self._reap()
            self._kill_orphaned_command()
            self._status.close()
            _close(self._out)
            if isinstance(first, dict) and first.get("setup_error"):
                raise SetupError(first["setup_error"])
            raise SetupError("the supervisor did not start the command: %r" % (first,))
        self._start = time.monotonic()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._wait, daemon=True).start()

    def _status_line(self, deadline):
        """The supervisor's next status line, or None at EOF or once the
        deadline has passed."""
        if not select.select([self._status], [], [], max(0.0, deadline - time.monotonic()))[0]:
            return None
        try:
            return json.loads(self._status.readline() or b"null")
        except ValueError:
            return None

    def cancel(self):
        self._events.put(("cancel",))

    def kill(self):
        """Ends the run now: the lifeline and, without waiting, the
        backstop."""
        self._cut_lifeline()
        self._backstop()

    def _terminate(self):
        """SIGTERM to the supervisor (and its group), which forwards it to
        every descendant."""
        with self._lock:
            if self.proc is None or self._reaped:
                return
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except OSError:
                pass

    def _cut_lifeline(self):
        with self._life_lock:
            _close(self._lifeline)
            self._lifeline = None

    def _backstop(self):
        """Kills the supervisor's tree, then the supervisor. The tree first:
        while the supervisor lives it holds every descendant, orphans
        included; once it is dead they belong to init."""
        with self._lock:
            if self.proc is None or self._reaped:
                return
            kill_tree(self.proc.pid)
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def _reap(self):
        """Waits for the supervisor to exit, kills anything still in its
        process group while its id is reserved, then reaps it."""
        pid = self.proc.pid
        try:
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass
        with self._lock:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            self._reaped = True
            self.proc.wait()

    def _kill_orphaned_command(self):
        """A supervisor that died without a status may have been killed by
        its command (same user), leaving the command to init. If the
        command still runs (the same pid with the same start time: not a
        reused pid) it is killed with its group and what is still below it.
        A process it had moved out of its group and tree is out of reach."""
        if not self.pid or self._pid_start is None or start_time(self.pid) != self._pid_start:
            return
        kill_tree(self.pid)
        for kill, sig in ((os.killpg, signal.SIGKILL), (os.kill, signal.SIGKILL)):
            try:
                kill(self.pid, sig)
            except OSError:
                pass
        # SIGKILL takes effect when the process next runs, which on a busy
        # machine can be later than this returns: the run ends only once the
        # command has ended (start_time: gone, or a zombie with no thread
        # left), so nothing of it runs after.
        deadline = time.monotonic() + ORPHAN_WAIT
        while start_time(self.pid) == self._pid_start and time.monotonic() < deadline:
            time.sleep(0.005)

    def _read(self):
        fd = self._out
        total = 0
        truncated = False
        try:
            while True:
                self._slots.acquire()
                if self._stopping:
                    return
                try:
                    data = os.read(fd, READ_CHUNK)
                except OSError:
                    data = b""
                if not data:
                    self._events.put(("eof",))
                    return
                before, total = total, total + len(data)
                if self.limit < 0:
                    self._events.put(("out", data))
                    continue
                keep = min(len(data), max(self.limit - before, 0))
                chunk = data[:keep]
                if keep < len(data) and not truncated:
                    truncated = True
                    self.outcome.truncated = True
                    chunk += truncation_marker(self.limit)
                if chunk:
                    self._events.put(("out", chunk))
                else:
                    self._slots.release()
        finally:
            _close(fd)

    def _wait(self):
        # The final status comes once the supervisor has killed and reaped
        # its whole tree; nothing (EOF) when it was ended through its
        # lifeline or killed.
        final = None
        try:
            line = self._status.readline()
            final = json.loads(line) if line else None
        except (OSError, ValueError):
            pass
        finally:
            self._status.close()
        self._reap()
        self._cut_lifeline()
        if final is None:
            self._kill_orphaned_command()
        self._exited.set()
        self._events.put(("exit", final))

    def _teardown(self):
        """The deadline's sequence, for a call that went away mid-run."""
        self._terminate()
        if self._exited.wait(self.kill_grace):
            return
        self._cut_lifeline()
        if not self._exited.wait(BACKSTOP):
            self._backstop()

    def stream(self):
        """Yields output chunks in arrival order until the command and its
        output have ended; then self.outcome is complete."""
        deadline = self._start + self.timeout if self.timeout > 0 else None
        kill_at = None  # the grace is over: cut the lifeline
        backstop_at = None  # the supervisor had its second: kill its tree
        exit_at = None
        eof = False
        exited = False
        final = None
        stopped = False  # SIGTERM sent, for a timeout or a cancellation
        try:
            while not exited or not eof:
                now = time.monotonic()
                waits = [
                    t - now
                    for t in (
                        deadline if not stopped else None,
                        kill_at,
                        backstop_at,
                        exit_at + DRAIN_WAIT if exit_at is not None else None,
                    )
                    if t is not None
                ]
                try:
                    ev = self._events.get(timeout=max(0.0, min(waits)) if waits else None)
                except queue.Empty:
                    ev = None
                if ev is not None:
                    if ev[0] == "out":
                        yield ev[1]
                        self._slots.release()
                    elif ev[0] == "eof":
                        eof = True
                    elif ev[0] == "exit":
                        exited, final = True, ev[1]
                        exit_at = time.monotonic()
                        kill_at = backstop_at = None
                        self.outcome.duration = exit_at - self._start
                    elif ev[0] == "cancel" and not stopped and not exited:
                        stopped = True
                        self.outcome.canceled = True
                        self._terminate()
                        kill_at = time.monotonic() + self.kill_grace
                now = time.monotonic()
                if deadline is not None and not stopped and not exited and now >= deadline:
                    stopped = True
                    self.outcome.timed_out = True
                    self._terminate()
                    kill_at = now + self.kill_grace
                if kill_at is not None and now >= kill_at:
                    self._cut_lifeline()
                    kill_at = None
                    backstop_at = now + BACKSTOP
                if backstop_at is not None and now >= backstop_at:
                    self._backstop()
                    backstop_at = None
                if exit_at is not None and not eof and now >= exit_at + DRAIN_WAIT:
                    # Something that escaped the tree holds the pipe: keep
                    # what was already read and stop waiting for the rest.
                    while True:
                        try:
                            ev = self._events.get_nowait()
                        except queue.Empty:
                            break
                        if ev[0] == "out":
                            yield ev[1]
                    break
            if final is None:
                # Ended through its lifeline or the backstop, each of
                # which kills the command with it.
                self.outcome.exit_code, self.outcome.signal = -1, "SIGKILL"
            elif final.get("error"):
                self.outcome.exit_code, self.outcome.error = -1, final["error"]
            else:
                self.outcome.exit_code = final.get("exit_code", -1)
                self.outcome.signal = final.get("signal", "")
        finally:
            self._stopping = True
            self._slots.release()
            if not exited:
                # The call went away mid-run: stop the command anyway.
                threading.Thread(target=self._teardown, daemon=True).start()
