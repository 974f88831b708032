"""The Paceline client: jobs, tasks, logs, events and rolling updates, from Python.

A thin layer over the master's gRPC API (``proto/paceline/v1``): each call sends one request
and returns the response's message (``paceline.v1`` types, e.g. ``JobSummary``,
``TaskInfo``), or raises a :class:`~paceline.PacelineError` with the status code and the
master's message. ``Client.call`` reaches any other method of the API.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, Union

import grpc
import yaml

from . import discovery
from ._transport import Transport
from .exec import ExecResult, run_exec
from .errors import (DeadlineExceededError, FailedPreconditionError, JobFailedError,
                     NotFoundError, from_rpc_error)
from .v1 import access_pb2, cluster_pb2, common_pb2, job_pb2, pool_pb2

__all__ = ["Client", "EventStream", "TaskRef", "Spec", "JOB_TERMINAL_STATES"]

# A task: "JOB/INSTANCE", (job, instance), or a TaskInfo.
TaskRef = Union[str, tuple[int, int], job_pb2.TaskInfo]
# A spec: a dict (sent as YAML), or the path of a YAML file.
Spec = Union[Mapping[str, Any], str, "os.PathLike[str]"]
# Job states a job does not leave.
JOB_TERMINAL_STATES = frozenset({"SUCCEEDED", "FAILED", "KILLED"})
# Update states an update does not leave.
_UPDATE_LIVE = (job_pb2.Update.ROLLING_FORWARD, job_pb2.Update.ROLLING_BACK)
_TASK_STATES = [n for n in common_pb2.Task.State.keys() if n != "STATE_UNSPECIFIED"]
_NOT_PLACED = (common_pb2.Task.PENDING, common_pb2.Task.READY)

Progress = Union[bool, Callable[[Any], None]]


def _task_ref(task: TaskRef) -> tuple[int, int]:
    """(job id, instance) of a task reference."""
    if isinstance(task, job_pb2.TaskInfo):
        return task.job_id, task.instance
    if isinstance(task, str):
        job, sep, instance = task.partition("/")
        if sep and job.isdigit() and instance.isdigit():
            return int(job), int(instance)
        raise ValueError(f"task {task!r}: expected JOB/INSTANCE, e.g. 12/3")
    job_id, instance = task
    return int(job_id), int(instance)


def _spec_yaml(spec: Spec, default_name: str) -> tuple[str, str]:
    """(the spec's YAML text, its name in the master's error messages)."""
    if isinstance(spec, Mapping):
        return yaml.safe_dump(dict(spec), sort_keys=False, allow_unicode=True), default_name
    path = os.fspath(spec)
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def _counts_line(counts: Mapping[str, int]) -> str:
    """"RUNNING 3, SUCCEEDED 997", in the order of the task state machine."""
    return ", ".join(f"{s} {counts[s]}" for s in _TASK_STATES if counts.get(s))


class _Reporter:
    """Shows a wait's progress: a line on stderr when it changes, or a callable's."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tty = progress is True and sys.stderr.isatty()
        self.last = ""

    def show(self, line: str, value: Any) -> None:
        if line == self.last or not self.progress:
            return
        self.last = line
        if callable(self.progress):
            self.progress(value)
        elif self.tty:
            sys.stderr.write(f"\r\033[K{line}")
            sys.stderr.flush()
        else:
            print(line, file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.tty and self.last:
            sys.stderr.write("\n")


class EventStream(Iterator[job_pb2.WatchEvent]):
    """The events of ``JobService.Watch``, as an iterator; see :meth:`Client.watch`.

    ``close()`` (also from another thread, or leaving a ``with`` block) ends it.
    """

    def __init__(self, transport: Transport, job_id: int, timeout: Optional[float]) -> None:
        self._transport = transport
        self._request = job_pb2.WatchRequest(job_id=job_id)
        self._job_id = job_id
        self._timeout = timeout
        self._call: Any = None
        self._lock = threading.Lock()
        self._closed = False
        self._done = False
        self._sessions = 0

    def __iter__(self) -> "EventStream":
        return self

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Ends the stream: the iteration stops, a blocked ``next()`` included."""
        with self._lock:
            self._closed = True
            call, self._call = self._call, None
        if call is not None:
            call.cancel()

    def _open(self) -> job_pb2.WatchEvent:
        try:
            call, first = self._transport.stream("JobService", "Watch", self._request,
                                                 timeout=self._timeout)
        except NotFoundError:
            if self._sessions == 0 or not self._job_id:
                raise
            # The job ended and was deleted while the master was out of reach.
            self._done = True
            gone = job_pb2.WatchEvent(job_id=self._job_id, at_unix_ms=int(time.time() * 1000))
            gone.job.state = "DELETED"
            return gone
        with self._lock:
            if self._closed:
                call.cancel()
                raise StopIteration
            self._call = call
        self._sessions += 1
        started: job_pb2.WatchEvent = first
        return started

    def __next__(self) -> job_pb2.WatchEvent:
        while True:
            if self._closed or self._done:
                raise StopIteration
            call = self._call
            if call is None:
                return self._open()
            try:
                event: job_pb2.WatchEvent = next(call)
            except StopIteration:
                self._call = None  # the master ended the stream: watch again
                continue
            except grpc.RpcError as e:
                self._call = None
                if self._closed or e.code() == grpc.StatusCode.CANCELLED:
                    raise StopIteration from None
                if e.code() not in (grpc.StatusCode.UNAVAILABLE,
                                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                                    grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise from_rpc_error(e) from None
                continue  # an outage, or fell behind: watch again (a new `started` follows)
            kind = event.WhichOneof("kind")
            if kind is None:
                continue  # a heartbeat
            if self._job_id and kind == "job" and (
                    event.job.state in JOB_TERMINAL_STATES or event.job.state == "DELETED"):
                self._done = True
                self.close()
            return event


class Client:
    """A connection to a Paceline master (or several, tried in turn).

    Build one with :meth:`from_env` (the CLI's discovery of address, token and CA) or
    directly::

        client = Client("10.0.0.5:5390", token="...", ca="ca.pem")

    `addr` may list several masters, comma-separated. `ca` is the cluster's CA file (or give
    its PEM text as `ca_pem`); without either the connection is plain text (a CA file that
    is not a PEM certificate raises :class:`~paceline.InvalidArgumentError`). `timeout` bounds
    each call, its retries included (seconds). A Client may be shared by threads; ``close()``
    (or a ``with`` block) closes its connections.
    """

    def __init__(self, addr: str = discovery.DEFAULT_ADDR, token: str = "", *,
                 ca: Optional[str] = None, ca_pem: Optional[bytes] = None,
                 timeout: float = 30.0) -> None:
        if ca is not None and ca_pem is None:
            ca_pem = discovery.read_ca(ca, "the ca argument")
        self._init(discovery.Settings(
            addrs=discovery.split_addrs(addr, "the addr argument"), token=token,
            ca_pem=ca_pem, addr_source="the addr argument",
            ca_source=ca or ("the ca_pem argument" if ca_pem else "")), timeout)

    def _init(self, settings: discovery.Settings, timeout: float) -> None:
        self.settings = settings
        # Inside a task (from_task): its job, instance and run; None otherwise.
        self.identity: Optional[discovery.TaskIdentity] = None
        self.timeout = timeout
        self._t = Transport(settings, timeout)

    @classmethod
    def from_settings(cls, settings: discovery.Settings, *, timeout: float = 30.0) -> "Client":
        """A client for `settings`, e.g. what :func:`paceline.resolve` found."""
        client = cls.__new__(cls)
        client._init(settings, timeout)
        return client

    @classmethod
    def from_env(cls, addr: Optional[str] = None, token: Optional[str] = None,
                 ca: Optional[str] = None, *, timeout: float = 30.0,
                 environ: Optional[Mapping[str, str]] = None,
                 cwd: Optional[Union[str, "os.PathLike[str]"]] = None) -> "Client":
        """A client configured as the CLI is (:mod:`paceline.discovery` has the rules).

        `addr`, `token` and `ca` (a file) win over everything, as the CLI's flags; then
        ``$PACELINE_ADDR``, ``$PACELINE_TOKEN`` (or the file ``$PACELINE_TASK_TOKEN_FILE``),
        ``$PACELINE_CA``; then ``~/.paceline/config``;
        then what a local ``paceline up`` wrote in ``./data``. Raises
        :class:`~paceline.InvalidArgumentError` for a malformed config or CA file.
        """
        return cls.from_settings(discovery.resolve(addr, token, ca, environ=environ, cwd=cwd),
                                 timeout=timeout)

    @classmethod
    def from_task(cls, *, timeout: float = 30.0,
                  environ: Optional[Mapping[str, str]] = None) -> "Client":
        """A client inside a task with an identity (``task.identity: true``, or a controller),
        acting as the task: the masters, the credential and the CA the agent gave it
        (:func:`paceline.discovery.task_settings`). The credential is read again whenever the
        agent renews its file. It may read the task's own job and its tasks, change its
        instance count, kill and exec into its instances; :attr:`identity` names the run.
        Raises :class:`~paceline.InvalidArgumentError` outside such a task.
        """
        client = cls.from_settings(discovery.task_settings(environ), timeout=timeout)
        client.identity = discovery.task_identity(environ)
        return client

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({','.join(self.settings.addrs)!r})"

    def close(self) -> None:
        """Closes the connections; a stream still open ends."""
        self._t.close()

    @property
    def address(self) -> str:
        """The master the client talks to now."""
        return self._t.address

    def call(self, service: str, method: str, request: Any, *, write: bool,
             timeout: Optional[float] = None) -> Any:
        """Any unary method of the API, e.g. ``call("HostService", "DrainHost", req,
        write=True)``: with the token, the retries and the errors of every other call.

        `write`: whether the call changes anything (a write is not retried once sent).
        """
        return self._t.call(service, method, request, write=write, timeout=timeout)

    # Who and where.

    def whoami(self) -> access_pb2.WhoAmIResponse:
        """The user, group, role and scope of the client's token."""
        resp: access_pb2.WhoAmIResponse = self.call(
            "AccessService", "WhoAmI", access_pb2.WhoAmIRequest(), write=False)
        return resp

    def info(self) -> cluster_pb2.GetInfoResponse:
        """The serving master's version, role and store, and the cluster's id."""
        resp: cluster_pb2.GetInfoResponse = self.call(
            "ClusterService", "GetInfo", cluster_pb2.GetInfoRequest(), write=False)
        return resp

    # Pools.

    def create_pool(self, path: str, spec: Spec) -> None:
        """Creates the pool `path` (e.g. "/batch") from a spec dict or YAML file."""
        text, name = _spec_yaml(spec, "pool")
        self.call("PoolService", "CreatePool",
                  pool_pb2.CreatePoolRequest(path=path, spec_yaml=text, spec_name=name),
                  write=True)

    def get_pool(self, path: str) -> pool_pb2.GetPoolResponse:
        """One pool: its spec, entitlement and allocation per dimension, and its queue."""
        resp: pool_pb2.GetPoolResponse = self.call(
            "PoolService", "GetPool", pool_pb2.GetPoolRequest(path=path), write=False)
        return resp

    def pools(self) -> list[pool_pb2.PoolInfo]:
        """Every pool, parents before children."""
        return list(self.call("PoolService", "ListPools", pool_pb2.ListPoolsRequest(),
                              write=False).pools)

    # Jobs.

    def create_job(self, spec: Spec, pool: str) -> int:
        """Submits a job to the leaf pool `pool`; returns its id.

        `spec` is a dict (e.g. ``{"name": "hello", "instances": 1, "task": {...}}``) or the
        path of a YAML file, as ``paceline job create -f``. An invalid spec raises
        :class:`~paceline.InvalidArgumentError` whose message names each problem's field.
        """
        text, name = _spec_yaml(spec, "job")
        resp = self.call("JobService", "CreateJob",
                         job_pb2.CreateJobRequest(pool=pool, spec_yaml=text, spec_name=name),
                         write=True)
        return int(resp.job_id)

    def get_job(self, job_id: int) -> job_pb2.GetJobResponse:
        """A job: ``.job`` (state, task counts, ...), ``.spec_yaml``, ``.pending_reason``
        (why an instance waits), ``.update`` (its latest rolling update)."""
        resp: job_pb2.GetJobResponse = self.call(
            "JobService", "GetJob", job_pb2.GetJobRequest(job_id=job_id), write=False)
        return resp

    def jobs(self, *, pool: str = "", states: Iterable[str] = (), types: Iterable[str] = (),
             name: str = "", owner: str = "",
             labels: Optional[Mapping[str, str]] = None) -> Iterator[job_pb2.JobSummary]:
        """The jobs that match every filter given (all jobs without one), by id; pages are
        fetched as the iteration goes."""
        req = job_pb2.QueryJobsRequest(pool=pool, states=list(states), types=list(types),
                                       name=name, owner=owner, labels=dict(labels or {}),
                                       page_size=1000)
        while True:
            resp = self.call("JobService", "QueryJobs", req, write=False)
            yield from resp.jobs
            if not resp.next_page_token:
                return
            req.page_token = resp.next_page_token

    def cron_runs(self, job_id: int) -> list[job_pb2.JobSummary]:
        """The runs of cron job `job_id` (a job with a `schedule`, docs/specs.md "Cron jobs"),
        newest tick first: the jobs labelled `paceline.cron/job: <job_id>`, each with its tick
        in the label `paceline.cron/tick` (Unix seconds)."""
        runs = list(self.jobs(labels={"paceline.cron/job": str(job_id)}))
        runs.sort(key=lambda j: (int(j.labels.get("paceline.cron/tick", "0")), j.id),
                  reverse=True)
        return runs

    def kill_job(self, job_id: int) -> None:
        """Kills every instance of a job (it ends KILLED)."""
        self.call("JobService", "KillJob", job_pb2.KillJobRequest(job_id=job_id), write=True)

    def delete_job(self, job_id: int) -> None:
        """Forgets a job whose tasks have all ended (FailedPreconditionError while any lives)."""
        self.call("JobService", "DeleteJob", job_pb2.DeleteJobRequest(job_id=job_id),
                  write=True)

    def wait(self, job_id: int, progress: Progress = True, *, timeout: Optional[float] = None,
             check: bool = False, poll_interval: float = 0.5) -> job_pb2.JobSummary:
        """Blocks until the job is SUCCEEDED, FAILED or KILLED; returns its summary.

        `progress`: True prints a line on stderr whenever the state or the task counts change
        (``job 7 RUNNING: RUNNING 40, SUCCEEDED 960``), as ``paceline job wait``; a callable
        is given the ``JobSummary`` instead; False shows nothing. `timeout` (seconds; None:
        no limit) raises :class:`~paceline.DeadlineExceededError`. `check` raises
        :class:`~paceline.JobFailedError` when the job did not succeed. A master out of reach
        is retried for the client's timeout at each poll.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        report = _Reporter(progress)
        try:
            while True:
                job = self.get_job(job_id).job
                report.show(f"job {job.id} {job.state}: {_counts_line(job.task_counts)}", job)
                if job.state in JOB_TERMINAL_STATES:
                    if check and job.state != "SUCCEEDED":
                        raise JobFailedError(f"job {job.id} ended {job.state}", job)
                    return job
                if deadline is not None and time.monotonic() >= deadline:
                    raise DeadlineExceededError(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"job {job.id} is still {job.state} after {timeout:g}s")
                time.sleep(poll_interval)
        finally:
            report.end()

    # Tasks.

    def tasks(self, job_id: int, states: Sequence[Union[str, int]] = ()) -> list[job_pb2.TaskInfo]:
        """Every instance of a job (or those in `states`, e.g. ``["FAILED"]``), by instance:
        state, host, run, exit code (-1: none), signal, reason, times."""
        wanted = [common_pb2.Task.State.Value(s) if isinstance(s, str) else s for s in states]
        return list(self.call("TaskService", "ListTasks",
                              job_pb2.ListTasksRequest(job_id=job_id, states=wanted),
                              write=False).tasks)

    def task(self, task: TaskRef) -> job_pb2.GetTaskResponse:
        """One instance (``.task``) and each of its runs (``.runs``, oldest first)."""
        job_id, instance = _task_ref(task)
        resp: job_pb2.GetTaskResponse = self.call(
            "TaskService", "GetTask", job_pb2.GetTaskRequest(job_id=job_id, instance=instance),
            write=False)
        return resp

    def task_events(self, task: TaskRef, limit: int = 0) -> list[job_pb2.TaskEvent]:
        """Every transition of an instance with its reason, oldest first (`limit`: the newest
        that many)."""
        job_id, instance = _task_ref(task)
        return list(self.call("TaskService", "ListTaskEvents", job_pb2.ListTaskEventsRequest(
            job_id=job_id, instance=instance, limit=limit), write=False).events)

    def kill_task(self, task: TaskRef) -> None:
        """Kills one instance; it stays KILLED."""
        job_id, instance = _task_ref(task)
        self.call("TaskService", "KillTask",
                  job_pb2.KillTaskRequest(job_id=job_id, instance=instance), write=True)

    def exec(self, task: TaskRef, argv: Sequence[str], stdin: Union[bytes, str, None] = None,
             *, timeout: Optional[float] = None) -> ExecResult:
        """Runs `argv` inside a running task (its cgroup, sandbox, user, variables and
        container), `stdin` its input: (exit_code, stdout, stderr), as ``paceline task exec``.
        See paceline/exec.py."""
        job_id, instance = _task_ref(task)
        return run_exec(self._t, job_id, instance, argv, stdin, timeout)

    def logs(self, task: TaskRef, follow: bool = True, *, stderr: bool = False, run: int = 0,
             tail: int = 0, poll_interval: float = 0.5) -> Iterator[str]:
        """The lines a run printed on stdout (or `stderr`), without their line ends.

        `follow` (the default) goes on until the run ends, as ``paceline task logs -f``:
        it waits for a task that has not started yet, and stays on the run it began with.
        Without it, the lines printed so far. `run`: an earlier run (0: the current one);
        `tail`: only the last that many lines to begin with. Bytes that are not UTF-8 are
        replaced.
        """
        job_id, instance = _task_ref(task)
        req = job_pb2.GetTaskLogsRequest(job_id=job_id, instance=instance, run=run,
                                         stderr=stderr, tail_lines=tail)
        pending = b""
        while True:
            try:
                resp = self.call("TaskService", "GetTaskLogs", req, write=False)
            except FailedPreconditionError:
                # Not placed on a host yet: while following, wait for it.
                if not follow or self.task((job_id, instance)).task.state not in _NOT_PLACED:
                    raise
                time.sleep(poll_interval)
                continue
            *lines, pending = (pending + resp.data).split(b"\n")
            for line in lines:
                yield line.decode("utf-8", errors="replace")
            req.run = resp.run  # stay on the run we started with
            req.tail_lines = 0
            more = resp.next_offset > req.offset and len(resp.data) > 0
            req.offset = resp.next_offset
            if more:
                continue  # the rest of a long log
            if not follow or resp.finished:
                if pending:
                    yield pending.decode("utf-8", errors="replace")
                return
            time.sleep(poll_interval)

    # Events.

    def watch(self, job_id: int = 0, *, timeout: Optional[float] = None) -> EventStream:
        """Job and task events as they happen (``JobService.Watch``), as an iterator of
        ``WatchEvent``; for one job, or every job (0).

        The first event is ``started`` (``event.WhichOneof("kind") == "started"``): nothing
        committed after it is missed. Then ``job`` events (``event.job.state``, task counts)
        and ``task`` events (``event.task.instance``, ``event.task.event``: run, state, host,
        reason). A watch of one job ends after the job's final state (or DELETED); a watch of
        every job runs until ``close()``. When the stream breaks (the master restarted, or
        the watcher fell behind) the client watches again and yields a new ``started``:
        events in between may be missing, so read the state again then. `timeout`: how long
        an outage may last (default: the client's).
        """
        return EventStream(self._t, job_id, timeout)

    # Endpoints.

    def endpoints(self, job_id: int) -> job_pb2.JobEndpoints:
        """Where a service or stateful job's instances take traffic (``JobService.GetEndpoints``):
        ``.dns_name``, ``.version`` and ``.endpoints``, each with ``instance``, ``run``, ``host``,
        ``address``, ``ports`` (name -> port), ``ready`` and, when not, ``why_not_ready``.
        Raises FailedPreconditionError for a batch or daemon job, NotFoundError for no job."""
        resp: job_pb2.JobEndpoints = self.call(
            "JobService", "GetEndpoints", job_pb2.GetEndpointsRequest(job_id=job_id),
            write=False)
        return resp

    def watch_endpoints(self, job_id: int, *,
                        timeout: Optional[float] = None) -> Iterator[job_pb2.JobEndpoints]:
        """The job's endpoints now, then again on every change (``JobService.WatchEndpoints``),
        as a generator of ``JobEndpoints``. A list equal to the last one yielded (the same
        ``version``: the master repeats an idle list, and the current one after a reconnect)
        is skipped. When the job is deleted it yields a last list with ``deleted`` set and
        ends; ``close()`` on the generator ends it earlier. When the stream breaks (the
        master restarted) it watches again; `timeout`: how long an outage may last (default:
        the client's)."""
        request = job_pb2.WatchEndpointsRequest(job_id=job_id)
        last: Optional[int] = None
        lists = 0
        while True:
            try:
                call, msg = self._t.stream("JobService", "WatchEndpoints", request,
                                           timeout=timeout)
            except NotFoundError:
                if lists == 0:
                    raise
                # Deleted while the master was out of reach.
                yield job_pb2.JobEndpoints(job_id=job_id, deleted=True)
                return
            try:
                while True:
                    lists += 1
                    if msg.deleted:
                        yield msg
                        return
                    if msg.version != last:
                        last = msg.version
                        yield msg
                    try:
                        msg = next(call)
                    except StopIteration:
                        break  # the master ended the stream: watch again
                    except grpc.RpcError as e:
                        if e.code() in (grpc.StatusCode.UNAVAILABLE,
                                        grpc.StatusCode.DEADLINE_EXCEEDED):
                            break  # an outage: watch again
                        raise from_rpc_error(e) from None
            finally:
                call.cancel()

    # Rolling updates.

    def update_job(self, job_id: int, spec: Optional[Spec] = None, *, instances: int = 0,
                   batch_size: Optional[int] = None, max_failures: Optional[int] = None,
                   rollback_on_failure: Optional[bool] = None, in_place: Optional[bool] = None,
                   min_healthy_time: Optional[float] = None, paused: bool = False,
                   dry_run: bool = False, override: bool = False,
                   version: int = 0) -> job_pb2.UpdateJobResponse:
        """Starts a rolling update to a new spec (a dict or YAML file) and/or a new number of
        `instances`, as ``paceline job update``.

        Options left None take the spec's ``update`` section; `min_healthy_time` is in
        seconds. `version` is the version the update replaces (0: the job's current one,
        read first). `dry_run` answers the plan (``added``, ``removed``, ``updated``,
        ``unchanged``) and changes nothing. Returns ``update_id`` and the new ``version``.
        """
        if spec is None and instances == 0:
            raise ValueError("give a new spec or instances")
        req = job_pb2.UpdateJobRequest(job_id=job_id, instances=instances, paused=paused,
                                       dry_run=dry_run, override=override, version=version)
        if spec is not None:
            req.spec_yaml, req.spec_name = _spec_yaml(spec, "job")
        opts = req.options
        if batch_size is not None:
            opts.batch_size = batch_size
        if max_failures is not None:
            opts.max_failures = max_failures
        if rollback_on_failure is not None:
            opts.rollback_on_failure = rollback_on_failure
        if in_place is not None:
            opts.in_place = in_place
        if min_healthy_time is not None:
            opts.min_healthy_time_ms = int(min_healthy_time * 1000)
        if version == 0:
            req.version = self.get_job(job_id).job.version
        resp: job_pb2.UpdateJobResponse = self.call("JobService", "UpdateJob", req, write=True)
        return resp

    def get_update(self, job_id: int, update_id: int = 0) -> job_pb2.UpdateInfo:
        """A job's update (0: the latest): state, done / in flight / failed of total."""
        resp: job_pb2.GetUpdateResponse = self.call("JobService", "GetUpdate", job_pb2.GetUpdateRequest(
            job_id=job_id, update_id=update_id), write=False)
        return resp.update

    def wait_update(self, job_id: int, progress: Progress = True, *,
                    timeout: Optional[float] = None, check: bool = False,
                    poll_interval: float = 0.5) -> job_pb2.UpdateInfo:
        """Blocks until the job's latest update ends (SUCCEEDED, FAILED, ROLLED_BACK or
        ABORTED); returns it. `progress`, `timeout` and `check` as for :meth:`wait`
        (a callable `progress` is given the ``UpdateInfo``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        report = _Reporter(progress)
        try:
            while True:
                u = self.get_update(job_id)
                state = job_pb2.Update.State.Name(u.state)
                report.show(f"update {u.id} of job {job_id} {state}"
                            f"{' (paused)' if u.paused else ''}: {u.done}/{u.total} done, "
                            f"{u.in_flight} in flight, {u.failed} failed", u)
                if u.state not in _UPDATE_LIVE:
                    if check and u.state != job_pb2.Update.SUCCEEDED:
                        raise JobFailedError(f"update {u.id} of job {job_id} ended {state}"
                                             f"{': ' + u.message if u.message else ''}", u)
                    return u
                if deadline is not None and time.monotonic() >= deadline:
                    raise DeadlineExceededError(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"update {u.id} of job {job_id} is still {state} after {timeout:g}s")
                time.sleep(poll_interval)
        finally:
            report.end()

    def pause_update(self, job_id: int) -> None:
        """Pauses the job's update: it starts no new instance (those in flight finish)."""
        self.call("JobService", "PauseUpdate", job_pb2.PauseUpdateRequest(job_id=job_id),
                  write=True)

    def resume_update(self, job_id: int) -> None:
        """Goes on with a paused update."""
        self.call("JobService", "ResumeUpdate", job_pb2.ResumeUpdateRequest(job_id=job_id),
                  write=True)

    def abort_update(self, job_id: int) -> None:
        """Stops the update where it is; instances keep the version they run."""
        self.call("JobService", "AbortUpdate", job_pb2.AbortUpdateRequest(job_id=job_id),
                  write=True)
