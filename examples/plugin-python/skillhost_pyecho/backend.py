"""pyecho, a passthrough backend: it runs commands unconfined and claims
only what it enforces, the timeout (and the output limit, which every
backend applies). It is the Python counterpart of plugins/null."""

import platform
import sys

import grpc

from . import contract
from .gen import executor_pb2, executor_pb2_grpc
from .runner import Run, SetupError

NAME = "pyecho"
VERSION = "0.1.0"

_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i686": "386", "armv7l": "arm"}


def _platform():
    """GOOS/GOARCH spelling, which is what Info.platform holds."""
    os_name = "darwin" if sys.platform == "darwin" else sys.platform.rstrip("0123456789")
    machine = platform.machine().lower()
    return "%s/%s" % (os_name, _ARCH.get(machine, machine))


def _bytes(s):
    # argv, env and dir are proto bytes fields: the host's exact bytes,
    # whatever their encoding. A peer built from an older proto, where they
    # were strings, sends UTF-8 text, which encodes back to the same bytes.
    if isinstance(s, str):
        return s.encode("utf-8")
    return bytes(s)


def _environment(entries):
    env = {}
    for kv in entries:
        name, sep, value = _bytes(kv).partition(b"=")
        if not sep or not name:
            raise SetupError("environment entry %r is not NAME=value" % kv)
        env[name] = value  # a repeated name: the later entry wins
    return env


class Executor(executor_pb2_grpc.ExecutorServicer):
    def Info(self, request, context):
        return executor_pb2.InfoResponse(
            name=NAME,
            version=VERSION,
            contract_versions=[contract.CONTRACT_VERSION],
            platform=_platform(),
            enforces=executor_pb2.Enforcement(timeout=True),
        )

    def Probe(self, request, context):
        return executor_pb2.ProbeResponse(
            status=executor_pb2.ProbeResponse.STATUS_HEALTHY,
            reason="passthrough: enforces timeouts and output limits, no confinement",
        )

    # Explain is left to the generated base class, which answers
    # UNIMPLEMENTED: the host then reports that this backend cannot explain.

    def Execute(self, request, context):
        try:
            run = Run(
                argv=[_bytes(a) for a in request.argv],
                cwd=_bytes(request.dir),
                env=_environment(request.env),
                timeout=request.grant.timeout_ns / 1e9,
                kill_grace=request.kill_grace_ns / 1e9,
                output_limit=request.output_limit,
            )
            run.start()
        except SetupError as e:
            contract.log.debug("command did not start", run_id=request.run_id, error=str(e))
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "setup failed: %s" % e)
        contract.calls.add(run)
        if not context.add_callback(run.cancel):  # the host cancels or goes away
            run.cancel()  # it already has
        try:
            for chunk in run.stream():
                yield executor_pb2.ExecuteResponse(output=chunk)
            o = run.outcome
            if o.canceled:
                return  # nobody is listening for a result
            if o.error:
                contract.log.error("supervisor failed", run_id=request.run_id, error=o.error)
                context.abort(grpc.StatusCode.INTERNAL, o.error)
            yield executor_pb2.ExecuteResponse(
                result=executor_pb2.Result(
                    exit_code=o.exit_code,
                    signal=o.signal,
                    timed_out=o.timed_out,
                    truncated=o.truncated,
                    duration_ns=int(o.duration * 1e9),
                    not_enforced=_not_enforced(request),
                )
            )
        finally:
            contract.calls.done(run)


def _not_enforced(request):
    """What a best-effort caller asked for and did not get."""
    if not request.best_effort or request.grant.trust == "core":
        return []
    return ["filesystem confinement", "network confinement", "resource limits"]
