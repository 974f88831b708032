"""A Dask driver on Paceline (examples/frameworks/dask/job.yaml): instance 0 of its job.

It starts the Dask scheduler in this process, lets Dask's adaptive scaling add workers to its
own job while there is work (each a new instance of the job, asked for with the task's
credential) and remove them when idle (retired gracefully, then their instances stopped), and
runs two real computations:

- a dask.array reduction: the sum of squares of 0 .. N-1 over 400 chunks;
- a dask.bag map: the squares of 0 .. M-1 over 300 partitions, summed.

Both are checked against their closed form; the driver exits non-zero when one is wrong. It
prints a line per change of its worker count, a line per worker that registers (its address and
the address its connection came from, as the scheduler sees them), each worker's startup latency
(from the scale-up request to its registration with the scheduler), and ends once the idle
workers are gone.

Environment (optional): DASK_MAX_WORKERS (4), DASK_TASK_SECONDS (0.05: how long each chunk or
partition works, so that there is load to scale for), DASK_IDLE_TIMEOUT (90 seconds to wait for
the workers to go once the work is done).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any

import dask.array as da
import dask.bag as db
import numpy as np
from distributed import Client

from paceline.dask import PacelineCluster

N = 2_000_000  # array elements: 400 chunks of 5,000 (the int64 sum of squares fits)
M = 300_000  # bag elements: 300 partitions of 1,000


def expected_sum_of_squares(n: int) -> int:
    return (n - 1) * n * (2 * n - 1) // 6


def slow_block(block: Any, seconds: float) -> Any:
    time.sleep(seconds)
    return block * block


def slow_partition(part: list[int], seconds: float) -> list[int]:
    time.sleep(seconds)
    return [x * x for x in part]


def describe_new_workers(cluster: PacelineCluster, seen: set[str]) -> None:
    """Prints each worker the scheduler has not shown before: its name, the address it
    registered with, and the address its connection to the scheduler comes from."""
    scheduler = cluster.scheduler
    if scheduler is None:
        return
    for address, ws in list(scheduler.workers.items()):
        if address in seen:
            continue
        stream = scheduler.stream_comms.get(address)
        comm = getattr(stream, "comm", None)
        if comm is None:  # registered, its stream not open yet: shown on a later look
            continue
        print(f"worker {ws.name} at {address} connected from {comm.peer_address}", flush=True)
        seen.add(address)


def watch_workers(cluster: PacelineCluster, stop: threading.Event) -> None:
    """Prints the worker count whenever it changes (what the cluster asked the job for, and
    what registered with the scheduler), and each new worker's addresses."""
    last = None
    seen: set[str] = set()
    while not stop.is_set():
        describe_new_workers(cluster, seen)
        now = (len(cluster.plan), len(cluster.observed))
        if now != last:
            print(f"workers requested={now[0]} registered={now[1]}", flush=True)
            last = now
        stop.wait(0.1)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    maximum = int(os.environ.get("DASK_MAX_WORKERS", "4"))
    seconds = float(os.environ.get("DASK_TASK_SECONDS", "0.05"))
    idle_timeout = float(os.environ.get("DASK_IDLE_TIMEOUT", "90"))
    ok = True
    with PacelineCluster() as cluster:
        print(f"scheduler at {cluster.scheduler_address}, job {cluster.job_id}", flush=True)
        stop = threading.Event()
        watcher = threading.Thread(target=watch_workers, args=(cluster, stop), daemon=True)
        watcher.start()
        cluster.adapt(minimum=0, maximum=maximum, interval="500ms", wait_count=4,
                      target_duration="1s")
        with Client(cluster) as client:
            x = da.arange(N, chunks=N // 400, dtype=np.int64)
            total = int(x.map_blocks(slow_block, seconds, dtype=np.int64).sum().compute())
            want = expected_sum_of_squares(N)
            print(f"array sum of squares: {total} (expected {want})", flush=True)
            ok &= total == want

            bag = db.range(M, npartitions=300)
            squares = int(bag.map_partitions(slow_partition, seconds).sum().compute())
            want = expected_sum_of_squares(M)
            print(f"bag sum of squares: {squares} (expected {want})", flush=True)
            ok &= squares == want

        # Idle now: adaptive scaling retires the workers and shrinks the job.
        until = time.monotonic() + idle_timeout
        while cluster.plan and time.monotonic() < until:
            time.sleep(0.2)
        print(f"idle: {len(cluster.plan)} workers left", flush=True)
        for name, latency in cluster.startup_latencies:
            print(f"worker {name} registered {latency:.3f}s after its scale-up request",
                  flush=True)
        stop.set()
        watcher.join()
    print("RESULT OK" if ok else "RESULT WRONG", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
