"""Runs one command under the contract's bounds, the way shared/runner does
without its Linux supervisor:

- the command runs in a new process group, stdin on /dev/null, stdout and
  stderr merged into one pipe so output keeps its order;
- at the deadline (or on cancellation) the whole group gets SIGTERM, and
  SIGKILL once the kill grace has passed;
- when the command exits, whatever it left in its group is killed;
- output past the limit is dropped, after one truncation marker, while the
  pipe keeps being drained so the command never blocks on it.

A descendant that calls setsid(2) leaves the group and is not contained;
the Go runner's supervisor (a child subreaper) closes that gap on Linux.
"""

import os
import queue
import signal
import subprocess
import threading
import time

READ_CHUNK = 32 << 10  # well under the contract's 64 KiB chunk limit
DEFAULT_OUTPUT_LIMIT = 1 << 20
DEFAULT_KILL_GRACE = 2.0
# How long to wait for the end of the output once the command and its group
# are gone; only a process that left the group can still hold the pipe.
DRAIN_WAIT = 0.25


def truncation_marker(limit):
    """The line emitted once when output is cut; the same bytes as the Go
    runner's TruncationMarker."""
    return ("\n[output truncated: exceeded %d bytes]\n" % limit).encode()


def signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return "signal %d" % num


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


class Run:
    """One command. stream() yields its output and fills outcome; cancel()
    may be called from any thread, at any time, more than once."""

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
        # Signalling the group and reaping its leader exclude each other,
        # so a signal can never reach a group whose id was reused.
        self._lock = threading.Lock()
        self._reaped = False
        self.proc = None

    def start(self):
        try:
            self.proc = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                close_fds=True,
                process_group=0,
                bufsize=0,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            raise SetupError(str(e)) from e
        self._start = time.monotonic()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._wait, daemon=True).start()

    def cancel(self):
        self._events.put(("cancel",))

    def signal_group(self, sig):
        with self._lock:
            if self.proc is None or self._reaped:
                return
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def _read(self):
        fd = self.proc.stdout.fileno()
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
            self.proc.stdout.close()

    def _wait(self):
        pid = self.proc.pid
        # Wait for the leader's exit without reaping it, kill what it left
        # in its group while its id is still reserved, then reap.
        try:
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass
        with self._lock:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reaped = True
            code = self.proc.wait()
        self._events.put(("exit", code))

    def stream(self):
        """Yields output chunks in arrival order until the command and its
        output have ended; then self.outcome is complete."""
        deadline = self._start + self.timeout if self.timeout > 0 else None
        kill_at = None
        exit_at = None
        eof = False
        code = None
        stopped = False  # SIGTERM sent, for a timeout or a cancellation
        try:
            while code is None or not eof:
                now = time.monotonic()
                waits = []
                if deadline is not None and not stopped:
                    waits.append(deadline - now)
                if kill_at is not None:
                    waits.append(kill_at - now)
                if exit_at is not None:
                    waits.append(exit_at + DRAIN_WAIT - now)
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
                        code = ev[1]
                        exit_at = time.monotonic()
                        kill_at = None
                        self.outcome.duration = exit_at - self._start
                    elif ev[0] == "cancel" and not stopped and code is None:
                        stopped = True
                        self.outcome.canceled = True
                        self.signal_group(signal.SIGTERM)
                        kill_at = time.monotonic() + self.kill_grace
                now = time.monotonic()
                if deadline is not None and not stopped and code is None and now >= deadline:
                    stopped = True
                    self.outcome.timed_out = True
                    self.signal_group(signal.SIGTERM)
                    kill_at = now + self.kill_grace
                if kill_at is not None and now >= kill_at:
                    self.signal_group(signal.SIGKILL)
                    kill_at = None
                if exit_at is not None and not eof and now >= exit_at + DRAIN_WAIT:
                    # Something that left the group holds the pipe: keep
                    # what was already read and stop waiting for the rest.
                    while True:
                        try:
                            ev = self._events.get_nowait()
                        except queue.Empty:
                            break
                        if ev[0] == "out":
                            yield ev[1]
                    break
            if code < 0:
                self.outcome.exit_code = -1
                self.outcome.signal = signal_name(-code)
            else:
                self.outcome.exit_code = code
        finally:
            self._stopping = True
            self._slots.release()
            if code is None:
                # The call went away mid-run: stop the command anyway.
                self.signal_group(signal.SIGTERM)
                t = threading.Timer(self.kill_grace, self.signal_group, (signal.SIGKILL,))
                t.daemon = True
                t.start()
