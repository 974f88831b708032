"""A command inside a running task (``TaskService.Exec``, as ``paceline task exec``).

The command runs in the task's environment on its host: its cgroup, sandbox (the working
directory), user, variables and, for a task that runs from an image, its container. ``run_exec``
sends ``stdin`` (bytes or str; none: the command reads end of file at once) and collects what
the command writes until it exits::

    code, out, err = client.exec("12/0", ["sh", "-c", "ls; df -h ."])

Allowed to whoever may submit to the job's pool (and to a task's credential, on its own job);
every call is recorded in the audit log.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, NamedTuple, Optional, Sequence, Union

import grpc

from ._transport import CONNECT_TIMEOUT, Transport
from .errors import UnavailableError, from_rpc_error
from .v1 import job_pb2

__all__ = ["ExecResult", "run_exec"]

CHUNK = 64 * 1024  # bytes of stdin per request


class ExecResult(NamedTuple):
    """What a command run by exec did: its exit code (128 + N when signal N ended it), and all
    it wrote to stdout and to stderr."""
    exit_code: int
    stdout: bytes
    stderr: bytes


def _requests(job_id: int, instance: int, argv: Sequence[str],
              stdin: Optional[bytes]) -> Iterator[job_pb2.ExecRequest]:
    """The open request, then stdin in pieces, then its end (and the end of our side)."""
    yield job_pb2.ExecRequest(open=job_pb2.ExecOpen(job_id=job_id, instance=instance,
                                                    argv=list(argv)))
    data = stdin or b""
    for i in range(0, len(data), CHUNK):
        yield job_pb2.ExecRequest(stdin=data[i:i + CHUNK])
    yield job_pb2.ExecRequest(close_stdin=True)


def run_exec(transport: Transport, job_id: int, instance: int, argv: Sequence[str],
             stdin: Union[bytes, str, None] = None, timeout: Optional[float] = None) -> ExecResult:
    """Runs `argv` in task `job_id`/`instance` (which must be RUNNING); raises a
    PacelineError when it cannot (NotFoundError: no such task; FailedPreconditionError: not
    running; PermissionDeniedError). `timeout`: seconds for the whole command (None: no limit).
    A write: not retried once sent (the command may have run)."""
    if not argv:
        raise ValueError("argv: expected the command to run, e.g. ['sh', '-c', 'ls']")
    data = stdin.encode() if isinstance(stdin, str) else stdin
    addr = transport.address
    reason = transport._ready(addr, time.monotonic() + CONNECT_TIMEOUT, True)
    if reason is not None:
        raise UnavailableError(grpc.StatusCode.UNAVAILABLE,
                               f"master {addr} unreachable: {reason}")
    stub: Any = transport.stub("TaskService", addr)
    out, err = bytearray(), bytearray()
    result: Optional[ExecResult] = None
    call = stub.Exec(_requests(job_id, instance, argv, data), timeout=timeout,
                     metadata=transport.metadata)
    try:
        # Read to the end of the stream (the master ends it once it has the exit and our side
        # is closed), so that the call is recorded as done rather than cancelled.
        for resp in call:
            kind = resp.WhichOneof("body")
            if kind == "stdout":
                out += resp.stdout
            elif kind == "stderr":
                err += resp.stderr
            elif kind == "exit":
                result = ExecResult(resp.exit.exit_code, bytes(out), bytes(err))
    except grpc.RpcError as e:
        call.cancel()
        if result is not None and e.code() == grpc.StatusCode.CANCELLED:
            return result
        raise from_rpc_error(e) from None
    if result is None:
        raise UnavailableError(grpc.StatusCode.UNAVAILABLE,
                               "the exec stream ended without the command's exit code")
    return result
