"""The plugin side of skillhost's wire protocol, as docs/contract.md
specifies it: the start-up checks, the TLS identity from an inherited
descriptor, the Unix socket and the handshake line, the go-plugin services
(health and shutdown), the lifeline, and hclog-style JSON logs on stderr.
Nothing in here is specific to a backend; serve() takes the Executor
servicer and runs it.
"""

import datetime
import json
import os
import re
import signal
import sys
import tempfile
import threading
import uuid
from concurrent import futures

import grpc

from .gen import controller_pb2, controller_pb2_grpc
from .gen import executor_pb2_grpc
from .gen import health_pb2, health_pb2_grpc

CONTRACT_VERSION = 1
CORE_PROTOCOL_VERSION = 1  # go-plugin's; the first field of the handshake line
MAGIC_COOKIE_KEY = "SKILLHOST_SANDBOX_PLUGIN"
MAGIC_COOKIE_VALUE = "6b1c5f2e9d8a4f03b7e2c1d0a9f8e7d6c5b4a3928170f6e5d4c3b2a190817263"
HEALTH_SERVICE = "plugin"
# How long a plugin whose host is gone waits for its commands to stop.
DRAIN_TIMEOUT = 3.0
MAX_TLS_BUNDLE = 64 << 10

_LEVELS = {"trace": 0, "debug": 1, "info": 2, "warn": 3, "error": 4, "off": 5}


class Logger:
    """Writes one hclog JSON object per line to stderr, which the host parses
    and re-logs at the same level."""

    def __init__(self, level):
        self.level = _LEVELS.get((level or "").strip().lower(), _LEVELS["info"])
        self._lock = threading.Lock()

    def log(self, level, message, **fields):
        if _LEVELS[level] < self.level:
            return
        now = datetime.datetime.now(datetime.timezone.utc)
        entry = {
            "@level": level,
            "@message": message,
            "@module": "sandbox",
            # exactly six fractional digits: the host parses this layout
            "@timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }
        entry.update(fields)
        line = (json.dumps(entry, default=str) + "\n").encode()
        with self._lock:
            try:
                os.write(2, line)
            except OSError:
                pass  # the host is gone; never let logging stop the plugin

    def debug(self, message, **fields):
        self.log("debug", message, **fields)

    def info(self, message, **fields):
        self.log("info", message, **fields)

    def warn(self, message, **fields):
        self.log("warn", message, **fields)

    def error(self, message, **fields):
        self.log("error", message, **fields)


log = Logger(os.environ.get("SKILLHOST_PLUGIN_LOG_LEVEL"))


class Calls:
    """The running Execute calls, so that a lost host or a shutdown can stop
    their commands before the plugin exits."""

    def __init__(self):
        self._cond = threading.Condition()
        self._runs = set()

    def add(self, run):
        with self._cond:
            self._runs.add(run)

    def done(self, run):
        with self._cond:
            self._runs.discard(run)
            self._cond.notify_all()

    def stop_all(self, timeout):
        """Cancels every call, waits up to timeout for them to end, then
        kills the command tree and supervisor of any that has not."""
        with self._cond:
            runs = list(self._runs)
        for r in runs:
            r.cancel()
        with self._cond:
            self._cond.wait_for(lambda: not self._runs, timeout)
            runs = list(self._runs)
        for r in runs:
            r.kill()


calls = Calls()
_socket_path = None


def _exit(code):
    """Ends the process at once, removing the socket (the host removes its
    directory too, but a plugin started without one uses a shared one)."""
    if _socket_path:
        try:
            os.unlink(_socket_path)
        except OSError:
            pass
    os._exit(code)


def _inherited_fd(name):
    value = os.environ.get(name, "")
    if value == "":
        return None
    try:
        fd = int(value)
    except ValueError:
        fd = -1
    if fd < 3:
        raise SystemExit("%s=%r is not an inherited descriptor" % (name, value))
    os.set_inheritable(fd, False)  # commands must never inherit it
    return fd


_PEM = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?-----END \1-----\r?\n?", re.S)


def read_tls_identity():
    """Returns (certificate, key, host certificate) as PEM from the
    descriptor named by SKILLHOST_TLS_FD, or None for a plaintext socket."""
    fd = _inherited_fd("SKILLHOST_TLS_FD")
    if fd is None:
        return None
    data = b""
    with os.fdopen(fd, "rb") as f:
        while len(data) <= MAX_TLS_BUNDLE:
            b = f.read(MAX_TLS_BUNDLE + 1 - len(data))
            if not b:
                break
            data += b
    if len(data) > MAX_TLS_BUNDLE:
        raise SystemExit("TLS identity is too large")
    blocks = [(m.group(1), m.group(0)) for m in _PEM.finditer(data)][:3]
    kinds = [k for k, _ in blocks]
    if kinds != [b"CERTIFICATE", b"PRIVATE KEY", b"CERTIFICATE"]:
        raise SystemExit("TLS identity: want a certificate, a key and the host's certificate, got %r" % kinds)
    return blocks[0][1], blocks[1][1], blocks[2][1]


def watch_lifeline():
    """Exits the plugin once the host's end of the lifeline pipe is closed,
    however the host died: running commands are stopped first."""
    fd = _inherited_fd("SKILLHOST_LIFELINE_FD")
    if fd is None:
        return

    def watch():
        while True:
            try:
                if not os.read(fd, 4096):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        log.info("host is gone; stopping")
        calls.stop_all(DRAIN_TIMEOUT)
        _exit(0)

    threading.Thread(target=watch, daemon=True, name="lifeline").start()


class _Health(health_pb2_grpc.HealthServicer):
    def Check(self, request, context):
        if request.service in ("", HEALTH_SERVICE):
            return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
        context.abort(grpc.StatusCode.NOT_FOUND, "unknown service %r" % request.service)


class _Controller(controller_pb2_grpc.GRPCControllerServicer):
    def __init__(self):
        self.server = None

    def Shutdown(self, request, context):
        def stop():
            log.debug("shutdown requested")
            calls.stop_all(1.5)  # the host kills the plugin after 2 s
            self.server.stop(None)
            _exit(0)

        threading.Thread(target=stop, daemon=True, name="shutdown").start()
        return controller_pb2.Empty()


def _negotiate():
    """The contract version to speak: the newest one both sides know. With
    no common version, say ours and let the host refuse with a clear message
    (what go-plugin does)."""
    offered = []
    for s in os.environ.get("PLUGIN_PROTOCOL_VERSIONS", "").split(","):
        try:
            offered.append(int(s))
        except ValueError:
            pass
    if offered and CONTRACT_VERSION not in offered:
        log.warn("no common contract version", host=offered, plugin=[CONTRACT_VERSION])
    return CONTRACT_VERSION


def serve(executor_servicer):
    """Runs executor_servicer as a skillhost sandbox plugin; never returns."""
    if sys.version_info < (3, 11):
        sys.exit("skillhost-sandbox-pyecho needs Python 3.11 or later (for process groups in subprocess)")
    if os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        sys.stderr.write(
            "This program is a skillhost sandbox plugin; skillhost starts it.\n"
            "It does nothing when run by hand.\n"
        )
        sys.exit(1)
    # An interactive Ctrl-C reaches the whole foreground group; the host
    # decides what to stop. A handler, not SIG_IGN, so commands do not
    # inherit an ignored SIGINT.
    signal.signal(signal.SIGINT, lambda *_: None)
    version = _negotiate()
    identity = read_tls_identity()
    watch_lifeline()

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=128, thread_name_prefix="rpc"),
        options=[
            ("grpc.max_receive_message_length", 16 << 20),
            ("grpc.max_send_message_length", 16 << 20),
        ],
    )
    executor_pb2_grpc.add_ExecutorServicer_to_server(executor_servicer, server)
    health_pb2_grpc.add_HealthServicer_to_server(_Health(), server)
    controller = _Controller()
    controller.server = server
    controller_pb2_grpc.add_GRPCControllerServicer_to_server(controller, server)

    socket_dir = os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or tempfile.gettempdir()
    global _socket_path
    path = _socket_path = os.path.join(socket_dir, "plugin" + uuid.uuid4().hex[:12])
    old = os.umask(0o077)  # the socket is the owner's alone
    try:
        if identity is None:
            bound = server.add_insecure_port("unix:" + path)
        else:
            cert, key, host_cert = identity
            creds = grpc.ssl_server_credentials(
                [(key, cert)], root_certificates=host_cert, require_client_auth=True
            )
            bound = server.add_secure_port("unix:" + path, creds)
        if not bound:
            raise SystemExit("cannot listen on %s" % path)
        server.start()
    finally:
        os.umask(old)
    log.debug("plugin address", network="unix", address=path)
    # The handshake: the first and only line this process writes to stdout.
    sys.stdout.write("%d|%d|unix|%s|grpc|\n" % (CORE_PROTOCOL_VERSION, version, path))
    sys.stdout.flush()
    server.wait_for_termination()
    _exit(0)
