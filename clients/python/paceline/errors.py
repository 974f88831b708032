"""Errors of the Paceline client: one exception class per gRPC status code the master uses.

Every error is a :class:`PacelineError` with the status ``code`` (a :class:`grpc.StatusCode`)
and the master's ``message``, which says what to fix (an invalid spec names the field)::

    try:
        client.create_job(spec, pool="/batch")
    except paceline.InvalidArgumentError as e:
        print(e.code.name, e.message)   # INVALID_ARGUMENT job:5:3: task.resources.memroy: ...

Catch a subclass for one code, or :class:`PacelineError` for all of them.
"""

from __future__ import annotations

from typing import Any, Optional

import grpc

__all__ = [
    "PacelineError",
    "InvalidArgumentError",
    "NotFoundError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "UnauthenticatedError",
    "FailedPreconditionError",
    "AbortedError",
    "ResourceExhaustedError",
    "UnavailableError",
    "DeadlineExceededError",
    "JobFailedError",
    "error_for",
    "from_rpc_error",
    "trailer",
]


class PacelineError(Exception):
    """A call that failed: the gRPC status ``code`` and the master's ``message``.

    ``message`` is the master's own text when it answered (else the client's account of what
    failed); ``hint``, when not empty, says what to do about it (e.g. where tokens come from)
    and is part of ``str(error)``. ``request_id`` is the master's id of the request (its audit
    log records it), when the master answered.
    """

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, code: grpc.StatusCode, message: str, request_id: str = "",
                 hint: str = "") -> None:
        super().__init__(f"{code.name}: {message}" + (f" ({hint})" if hint else ""))
        self.code = code
        self.message = message
        self.request_id = request_id
        self.hint = hint


class InvalidArgumentError(PacelineError):
    """INVALID_ARGUMENT: a request or spec the master refused; the message names the field."""


class NotFoundError(PacelineError):
    """NOT_FOUND: no such job, task, pool, update or token."""


class AlreadyExistsError(PacelineError):
    """ALREADY_EXISTS: e.g. a pool of that path."""


class PermissionDeniedError(PacelineError):
    """PERMISSION_DENIED: the token's role does not allow the call on that pool."""


class UnauthenticatedError(PacelineError):
    """UNAUTHENTICATED: no token, or one that is wrong, expired or revoked."""


class FailedPreconditionError(PacelineError):
    """FAILED_PRECONDITION: the call does not fit the current state (e.g. a task not placed)."""


class AbortedError(PacelineError):
    """ABORTED: a version conflict (an update naming a version that is no longer current)."""


class ResourceExhaustedError(PacelineError):
    """RESOURCE_EXHAUSTED: e.g. a watcher that fell too far behind."""


class UnavailableError(PacelineError):
    """UNAVAILABLE: the master could not be reached, or could not commit."""


class DeadlineExceededError(PacelineError):
    """DEADLINE_EXCEEDED: the master did not answer in time, or a wait gave up."""


class JobFailedError(FailedPreconditionError):
    """A job (or update) waited for with ``check=True`` ended in another state than SUCCEEDED.

    ``result`` is what the wait returned: the job's summary, or the update.
    """

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(grpc.StatusCode.FAILED_PRECONDITION, message)
        self.result = result


_BY_CODE: dict[grpc.StatusCode, type[PacelineError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.ABORTED: AbortedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
}


def error_for(code: grpc.StatusCode, message: str, request_id: str = "",
              hint: str = "") -> PacelineError:
    """The exception for `code`: its subclass, or PacelineError for the other codes."""
    return _BY_CODE.get(code, PacelineError)(code, message, request_id, hint)


def trailer(error: grpc.RpcError, key: str) -> Optional[str]:
    """The value of the trailing metadata `key` of a failed call, if it has one."""
    trailing = getattr(error, "trailing_metadata", None)
    for k, v in (trailing() if callable(trailing) else None) or ():
        if k == key:
            return v if isinstance(v, str) else v.decode(errors="replace")
    return None


def from_rpc_error(error: grpc.RpcError, hint: str = "") -> PacelineError:
    """The exception for a failed gRPC call: its code, and the master's message as it is."""
    code = error.code() if callable(getattr(error, "code", None)) else grpc.StatusCode.UNKNOWN
    details = error.details() if callable(getattr(error, "details", None)) else str(error)
    return error_for(code, details or "", trailer(error, "paceline-request-id") or "", hint)
