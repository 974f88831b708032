"""Paceline's Python client.

::

    import paceline

    client = paceline.Client.from_env()          # the CLI's address, token and CA
    # inside a task with an identity: paceline.Client.from_task()
    job = client.create_job("job.yaml", pool="/batch")
    summary = client.wait(job)                   # progress on stderr
    for t in client.tasks(job):
        print(t.instance, t.exit_code)

docs/python.md in the Paceline repository describes every call.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .client import JOB_TERMINAL_STATES, Client, EventStream, Spec, TaskRef
    from .discovery import Settings, TaskIdentity, resolve
    from .errors import (AbortedError, AlreadyExistsError, DeadlineExceededError,
                         FailedPreconditionError, InvalidArgumentError, JobFailedError,
                         NotFoundError, PacelineError, PermissionDeniedError,
                         ResourceExhaustedError, UnauthenticatedError, UnavailableError)
    from .exec import ExecResult

# Each name is imported on first use (PEP 562), so that a process that needs only a submodule
# without gRPC (paceline.dask_worker, which must start fast) does not pay for gRPC, protobuf
# and the generated code.
_WHERE = {
    **dict.fromkeys(["JOB_TERMINAL_STATES", "Client", "EventStream", "Spec", "TaskRef"],
                    ".client"),
    "ExecResult": ".exec",
    **dict.fromkeys(["Settings", "TaskIdentity", "resolve"], ".discovery"),
    **dict.fromkeys(["PacelineError", "InvalidArgumentError", "NotFoundError",
                     "AlreadyExistsError", "PermissionDeniedError", "UnauthenticatedError",
                     "FailedPreconditionError", "AbortedError", "ResourceExhaustedError",
                     "UnavailableError", "DeadlineExceededError", "JobFailedError"], ".errors"),
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'paceline' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "__version__",
    "Client",
    "EventStream",
    "Spec",
    "TaskRef",
    "ExecResult",
    "JOB_TERMINAL_STATES",
    "Settings",
    "TaskIdentity",
    "resolve",
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
]
