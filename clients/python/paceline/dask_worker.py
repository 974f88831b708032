"""A Dask worker of a Paceline job, started fast: ``python3 -m paceline.dask_worker [OPTIONS]``.

The worker instances of a Dask job (examples/frameworks/dask/job.yaml; :mod:`paceline.dask` has
the driver's side) run this. It finds the scheduler that instance 0 of its own job runs (the
task's ``address`` and its port named ``dask``, through the API with the task's credential) and
runs a ``distributed.Worker`` against it in this same interpreter, on an asyncio loop: named
after its instance (an int), listening on its host's address (``$PACELINE_HOST_ADDRESS``) and on
its own port named ``dask`` (``$PACELINE_PORT_DASK``).

What makes it start fast (the driver waits for it on every scale-up):

- one interpreter: no ``dask-worker`` exec'd after the lookup, so Python starts and ``distributed``
  (with dask, numpy and tornado) is imported once;
- the lookup runs in a child forked before anything is imported, in parallel with the parent's
  import of ``distributed``; only the child imports gRPC and the client (``paceline``'s package
  imports them lazily), and hands the scheduler's address back through a pipe;
- no garbage collection during the imports (they make no garbage).

It leaves as a worker should: retired by the scheduler (``retire_workers``, which the driver's
adaptive scaling does before it lowers the instance count) it closes and exits 0; on SIGTERM or
SIGINT (the agent stopping its instance) it closes, telling the scheduler, and exits 0.

Options: ``--nthreads N`` (1), ``--memory-limit LIMIT`` (``auto``; 0 for none, as dask-worker),
``--local-directory DIR``, ``--death-timeout SECONDS``, ``--scheduler ADDRESS`` (skip the lookup;
e.g. tcp://198.18.0.10:40000), ``--lookup-timeout SECONDS`` (120: how long to wait for instance 0
to run the scheduler).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from typing import Any, Optional, Sequence

__all__ = ["main", "find_scheduler", "PORT_NAME"]

PORT_NAME = "dask"  # the job's port: the scheduler's on instance 0, each worker's on the others


def _port_env(name: str) -> str:
    return "PACELINE_PORT_" + name.upper().replace("-", "_")


def find_scheduler(timeout: float = 120.0, instance: int = 0) -> str:
    """tcp://ADDRESS:PORT of the scheduler that instance `instance` of this task's job runs,
    once its run is live and holds the port named ``dask``; asked with the task's credential
    (``paceline.Client.from_task()``), every 0.2 s until `timeout` seconds have passed."""
    from .client import Client  # gRPC: only in the process that looks up

    with Client.from_task() as client:
        me = client.identity
        assert me is not None
        until = time.monotonic() + timeout
        while True:
            t = client.task((me.job_id, instance)).task
            port = t.ports.get(PORT_NAME, 0)
            if t.address and port:
                return f"tcp://{t.address}:{port}"
            if time.monotonic() > until:
                raise TimeoutError(f"instance {instance} of job {me.job_id} runs no scheduler "
                                   f"after {timeout:g}s (state {t.state}, ports {dict(t.ports)})")
            time.sleep(0.2)


class _Lookup:
    """find_scheduler() in a forked child, while the parent imports distributed. The child
    writes the address, or "!" and the error, to a pipe and exits; result() reads it."""

    def __init__(self, timeout: float) -> None:
        self._pid = 0
        self._fd = -1
        self._inline: Optional[float] = None
        try:
            read, write = os.pipe()
            pid = os.fork()
        except OSError:  # no fork (e.g. a pids limit reached): look up in this process
            self._inline = timeout
            return
        if pid == 0:  # the child: look up, report, leave without running the parent's exits
            os.close(read)
            code = 0
            try:
                message = find_scheduler(timeout)
            except BaseException as e:  # noqa: BLE001 (every failure goes to the parent)
                message, code = f"!{type(e).__name__}: {e}", 1
            try:
                os.write(write, message.encode())
            finally:
                os._exit(code)
        os.close(write)
        self._pid, self._fd = pid, read

    def result(self) -> str:
        """The scheduler's address; raises RuntimeError with the child's error."""
        if self._inline is not None:
            return find_scheduler(self._inline)
        chunks = []
        while chunk := os.read(self._fd, 65536):
            chunks.append(chunk)
        os.close(self._fd)
        os.waitpid(self._pid, 0)
        text = b"".join(chunks).decode(errors="replace")
        if not text or text.startswith("!"):
            raise RuntimeError("finding the scheduler (instance 0 of this task's job): " +
                               (text[1:] or "the lookup died"))
        return text


def _since_start() -> float:
    """Seconds since this process started (its start time in /proc/self/stat, in clock ticks
    since boot); 0 where that cannot be read."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError):
        return 0.0


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m paceline.dask_worker",
                                description="A Dask worker of this task's Paceline job.")
    p.add_argument("--nthreads", type=int, default=1)
    p.add_argument("--memory-limit", default="auto")
    p.add_argument("--local-directory", default=None)
    p.add_argument("--death-timeout", type=float, default=None)
    p.add_argument("--scheduler", default="", help="the scheduler's address (no lookup)")
    p.add_argument("--lookup-timeout", type=float, default=120.0)
    args = p.parse_args(list(argv))
    if args.nthreads < 1:
        p.error(f"--nthreads: {args.nthreads}; expected 1 or more")
    return args


async def _serve(scheduler: str, name: Any, args: argparse.Namespace,
                 marks: dict[str, float]) -> int:
    import asyncio
    import signal

    from distributed import Worker

    options: dict[str, Any] = {"name": name, "nthreads": args.nthreads,
                               "memory_limit": args.memory_limit, "dashboard": False}
    host = os.environ.get("PACELINE_HOST_ADDRESS", "")
    port = os.environ.get(_port_env(PORT_NAME), "")
    if host:
        options["host"] = host
    if port.isdigit():
        options["port"] = int(port)
    if args.local_directory:
        options["local_directory"] = args.local_directory
    if args.death_timeout is not None:
        options["death_timeout"] = args.death_timeout
    worker = Worker(scheduler, **options)
    loop = asyncio.get_running_loop()
    closing: list[asyncio.Task[Any]] = []

    def stop(signum: int) -> None:
        if not closing:
            print(f"paceline.dask_worker: {signal.Signals(signum).name}, closing", flush=True)
            closing.append(asyncio.ensure_future(worker.close(reason="signal")))

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop, signum)
    await worker
    steps = ", ".join(f"{k} at {v:.2f}s" for k, v in marks.items())
    print(f"paceline.dask_worker: worker {name} at {worker.address}, scheduler {scheduler}, "
          f"registered {_since_start():.2f}s after the process started ({steps})", flush=True)
    await worker.finished()
    for task in closing:
        await task
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    instance = os.environ.get("PACELINE_INSTANCE_ID", "")
    if not args.scheduler and not os.environ.get("PACELINE_JOB_ID", "").isdigit():
        print("paceline.dask_worker: PACELINE_JOB_ID: not set; expected to run as an instance "
              "of a Paceline job (or give --scheduler)", file=sys.stderr)
        return 2
    # No garbage collection while importing: the imports make hundreds of thousands of objects
    # and no garbage, and the collector's passes over them cost about 15% of the import's CPU.
    gc.disable()
    lookup = None if args.scheduler else _Lookup(args.lookup_timeout)
    import asyncio  # noqa: E402 (after the fork: the child needs none of it)

    marks = {"main": _since_start()}
    import distributed  # noqa: F401 (the long import, while the child looks up)

    gc.freeze()  # what the imports made stays: later collections need not look at it
    gc.enable()
    marks["imported"] = _since_start()
    try:
        scheduler = args.scheduler or (lookup.result() if lookup else "")
    except (RuntimeError, TimeoutError) as e:
        print(f"paceline.dask_worker: {e}", file=sys.stderr)
        return 1
    marks["scheduler found"] = _since_start()
    name: Any = int(instance) if instance.isdigit() else (instance or None)
    return asyncio.run(_serve(scheduler, name, args, marks))


if __name__ == "__main__":
    sys.exit(main())
