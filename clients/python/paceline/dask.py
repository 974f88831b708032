"""Dask on Paceline: a driver that scales its own job's workers (the Spark-driver pattern).

One Paceline job holds the whole Dask cluster: instance 0 is the driver (``controller: true``),
which runs the Dask scheduler in its own process and the user's computation; instances 1, 2, ...
are workers, which run a Dask worker against that scheduler. The driver grows and shrinks the
job through its task credential (``Client.from_task()``: it may read its job, change its instance
count, and kill its instances; nothing else)::

    from distributed import Client
    from paceline.dask import PacelineCluster

    with PacelineCluster() as cluster, Client(cluster) as client:
        cluster.adapt(minimum=0, maximum=8)   # or cluster.scale(4)
        print(client.submit(sum, range(10)).result())

Worker ``i`` is instance ``i`` and registers with the scheduler under the name ``i`` (an int).
Growing to ``n`` workers sets the job's instance count to ``1 + n`` (``UpdateJob``: a batch job
grows at once). Shrinking retires the highest-numbered workers first, gracefully (the scheduler
moves their data to the others and closes them: ``retire_workers``), then lowers the instance
count, which stops those instances. Closing the cluster retires every worker and leaves the job with
its driver alone, so that the job ends when the driver does.

A worker instance runs ``python3 -m paceline.dask_worker`` (:mod:`paceline.dask_worker`): it
needs a credential too (``identity: true`` on the task), finds where instance 0 runs (the task's
``address`` and its port named ``dask``) and runs a Dask worker against it in the same
interpreter, on its host's address and its own port named ``dask``. The scheduler listens on the
driver's host address (``$PACELINE_HOST_ADDRESS``) by default. examples/frameworks/dask/ has a
whole job; docs/frameworks.md "Dask" says how it fits together.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from distributed import Scheduler
from distributed.core import Status, rpc
from distributed.deploy.adaptive import Adaptive
from distributed.deploy.cluster import Cluster

from .dask_worker import PORT_NAME, _port_env
from .errors import PacelineError

if TYPE_CHECKING:
    from .client import Client

__all__ = ["PacelineCluster", "PacelineAdaptive", "worker_main", "PORT_NAME"]

log = logging.getLogger("paceline.dask")


class PacelineAdaptive(Adaptive):
    """Dask's adaptive scaling, closing the highest-numbered workers first: the instances that
    a lower instance count stops."""

    async def workers_to_close(self, target: int) -> list[int]:  # type: ignore[override]
        chosen = await super().workers_to_close(target)
        if not chosen:
            return []
        cluster: PacelineCluster = self.cluster
        live = sorted(n for n in cluster.observed if n in cluster.plan)
        return live[-len(chosen):]


class PacelineCluster(Cluster):
    """A Dask cluster whose workers are the instances of this task's own Paceline job.

    Runs the scheduler in this process, listening on `port` (default: the job's port named
    ``dask``, ``$PACELINE_PORT_DASK``) on `host` (default: the task's host address,
    ``$PACELINE_HOST_ADDRESS``; every address outside a task). `client` is the
    Paceline client to scale with (default: :meth:`paceline.Client.from_task`); `job_id` the
    job (default: this task's). Workers are instances ``first_worker`` and up.
    """

    def __init__(self, client: Optional[Client] = None, *, job_id: Optional[int] = None,
                 first_worker: int = 1, host: str = "", port: Optional[int] = None,
                 asynchronous: bool = False, loop: Any = None, name: Optional[str] = None,
                 scheduler_options: Optional[dict[str, Any]] = None) -> None:
        super().__init__(asynchronous=asynchronous, loop=loop, name=name)
        if client is None:
            from .client import Client
            client = Client.from_task()
        self.paceline = client
        if job_id is None:
            if self.paceline.identity is None:
                raise ValueError("job_id: not given, and the client is not a task's "
                                 "(Client.from_task())")
            job_id = self.paceline.identity.job_id
        self.job_id = job_id
        self.first_worker = first_worker
        if port is None:
            text = os.environ.get(_port_env(PORT_NAME), "")
            port = int(text) if text.isdigit() else 0
        host = host or os.environ.get("PACELINE_HOST_ADDRESS", "")
        self._scheduler_options = {"host": host or None, "port": port, "dashboard": False,
                                   "dashboard_address": None, **(scheduler_options or {})}
        self.scheduler: Optional[Scheduler] = None
        self._count = first_worker  # the job's instance count as this cluster last set it
        self._dead: set[int] = set()  # retired below the top: their slots stay empty
        self._lock: Optional[asyncio.Lock] = None
        self._asked: dict[str, float] = {}  # worker name -> when its instance was asked for
        # (worker name, seconds from the scale-up request to its registration), in order.
        self.startup_latencies: list[tuple[str, float]] = []
        try:
            from_running_loop = (getattr(loop, "asyncio_loop", None)
                                 is asyncio.get_running_loop())
        except RuntimeError:
            from_running_loop = asynchronous
        if not from_running_loop:
            self._loop_runner.start()
            self.sync(self._start)

    # --- Paceline calls (blocking gRPC), off the event loop.

    async def _blocking(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, lambda: f(*args, **kwargs))

    async def _set_instances(self, count: int) -> None:
        if count == self._count:
            return
        now = time.monotonic()
        for i in range(self._count, count):
            self._asked[str(i)] = now
        await self._blocking(self.paceline.update_job, self.job_id, instances=count)
        log.info("job %d: %d -> %d instances", self.job_id, self._count, count)
        self._count = count
        self._dead = {n for n in self._dead if n < count}

    # --- distributed.deploy.Cluster.

    async def _start(self) -> None:
        if self.status == Status.running:
            return
        self._lock = asyncio.Lock()
        self.status = Status.starting
        job = await self._blocking(self.paceline.get_job, self.job_id)
        self._count = max(self.first_worker, job.job.instances)
        scheduler = await Scheduler(**self._scheduler_options)
        self.scheduler = scheduler
        self.scheduler_comm = rpc(scheduler.address)
        await super()._start()

    async def _close(self) -> None:
        if self.status == Status.closed:
            return
        with_scheduler = self.scheduler_comm is not None and self.status == Status.running
        if with_scheduler:
            try:
                await self._scale(0)
            except (OSError, PacelineError) as e:
                log.warning("job %d: the workers were not scaled down: %s", self.job_id, e)
        await super()._close()
        if self.scheduler is not None:
            await self.scheduler.close()

    @property
    def plan(self) -> set[int]:
        return set(range(self.first_worker, self._count)) - self._dead

    @property
    def requested(self) -> set[int]:
        return self.plan

    @property
    def observed(self) -> set[int]:
        out = set()
        for d in self.scheduler_info["workers"].values():
            name = d.get("name")
            if isinstance(name, int) or (isinstance(name, str) and name.isdigit()):
                out.add(int(name))
        return out

    @property
    def scheduler_address(self) -> str:
        return self.scheduler.address if self.scheduler is not None else ""

    def _update_worker_status(self, op: str, msg: Any) -> None:
        added = msg.get("workers", {}) if op == "add" and isinstance(msg, dict) else {}
        names = [str(info.get("name", "")) for info in added.values() if isinstance(info, dict)]
        super()._update_worker_status(op, msg)
        now = time.monotonic()
        for name in names:
            asked = self._asked.pop(name, None)
            if asked is not None:
                self.startup_latencies.append((name, now - asked))

    def adapt(self, Adaptive: type[Adaptive] = PacelineAdaptive,  # noqa: N803 (Dask's name)
              **kwargs: Any) -> Adaptive:
        """Adaptive scaling (Dask's ``minimum``, ``maximum``, ``interval``, ``wait_count``,
        ``target_duration``), closing the highest-numbered workers first."""
        return super().adapt(Adaptive=Adaptive, **kwargs)

    def scale(self, n: int) -> Any:
        """Grows or shrinks to `n` workers (retiring the highest-numbered first)."""
        if self._in_loop():
            return self._scale(n)
        return self.sync(self._scale, n)

    def scale_down(self, workers: Iterable[int]) -> Any:
        """Stops the instances of `workers` (names), already retired by the caller (Dask's
        Adaptive retires them first)."""
        if self._in_loop():
            return self._scale_down(list(workers))
        return self.sync(self._scale_down, list(workers))

    def _in_loop(self) -> bool:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return False
        return running is getattr(self.loop, "asyncio_loop", None)

    async def _scale(self, n: int) -> None:
        if n < 0:
            raise ValueError(f"n: {n}; expected 0 or more workers")
        assert self._lock is not None
        async with self._lock:
            live = sorted(self.plan)
            if n >= len(live):
                await self._set_instances(self._count + n - len(live))
                return
            going = live[n:]  # the highest-numbered
            await self._retire(going)
            await self._shrink(going)

    async def _scale_down(self, workers: Sequence[int]) -> None:
        assert self._lock is not None
        async with self._lock:
            await self._shrink([int(w) for w in workers])

    async def _retire(self, going: Sequence[int]) -> None:
        # By the names the scheduler knows them by.
        names = [d["name"] for d in self.scheduler_info["workers"].values()
                 if str(d.get("name")) in {str(n) for n in going}]
        if names and self.scheduler_comm is not None:
            log.info("job %d: retiring workers %s", self.job_id, names)
            await self.scheduler_comm.retire_workers(names=names, remove=True,
                                                     close_workers=True)

    async def _shrink(self, going: Sequence[int]) -> None:
        """Lowers the instance count below every retired worker at the top, which stops their
        instances; one below a live worker is killed (``task kill``) and its slot stays empty."""
        new = {n for n in going if self.first_worker <= n < self._count} - self._dead
        self._dead |= new
        count = self._count
        while count > self.first_worker and count - 1 in self._dead:
            count -= 1
        for n in sorted(new):
            if n < count:
                await self._blocking(self.paceline.kill_task, (self.job_id, n))
        await self._set_instances(count)


def worker_main(argv: Optional[Sequence[str]] = None) -> int:
    """``python3 -m paceline.dask worker [OPTIONS]``: the same as ``python3 -m
    paceline.dask_worker [OPTIONS]`` (:func:`paceline.dask_worker.main`), which starts faster."""
    from . import dask_worker

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "worker":
        print("usage: python3 -m paceline.dask worker [OPTIONS]", file=sys.stderr)
        return 2
    return dask_worker.main(args[1:])


if __name__ == "__main__":
    sys.exit(worker_main())
