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

from ._version import __version__
from .client import JOB_TERMINAL_STATES, Client, EventStream, Spec, TaskRef
from .exec import ExecResult
from .discovery import Settings, TaskIdentity, resolve
from .errors import (AbortedError, AlreadyExistsError, DeadlineExceededError,
                     FailedPreconditionError, InvalidArgumentError, JobFailedError, NotFoundError,
                     PacelineError, PermissionDeniedError, ResourceExhaustedError,
                     UnauthenticatedError, UnavailableError)

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
