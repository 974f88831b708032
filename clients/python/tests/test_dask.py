"""paceline.dask's cluster manager against a small stand-in for the job it scales: a client
whose update_job starts and stops real worker processes (`python3 -m paceline.dask_worker`,
given the scheduler's address), one per instance, named after it (what the job's worker
instances do on Paceline). The real thing runs in tests/e2e/frameworks_dask_e2e_test.cc."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import unittest
from types import SimpleNamespace
from typing import Any, Optional

try:
    import dask.array as da
    import numpy as np
    from distributed import Client as DaskClient

    from paceline.dask import PacelineCluster
except ImportError:  # pragma: no cover (Debian's python3-distributed is a test dependency)
    PacelineCluster = None  # type: ignore[assignment,misc]


class LocalJob:
    """Instances 1..count-1 of a job as local worker processes; instance 0 is the test."""

    def __init__(self) -> None:
        self.count = 1
        self.scheduler = ""
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.history: list[int] = [1]  # every instance count set, in order
        self.killed: list[int] = []
        self.lock = threading.Lock()

    # The calls PacelineCluster makes, as paceline.Client's.
    def get_job(self, job_id: int) -> Any:
        return SimpleNamespace(job=SimpleNamespace(instances=self.count))

    def update_job(self, job_id: int, *, instances: int) -> None:
        with self.lock:
            for i in range(self.count, instances):
                self.procs[i] = subprocess.Popen(
                    [sys.executable, "-m", "paceline.dask_worker", "--scheduler", self.scheduler,
                     "--nthreads", "1"],
                    env=dict(os.environ, PACELINE_INSTANCE_ID=str(i),
                             PACELINE_HOST_ADDRESS="127.0.0.1"),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for i in range(instances, self.count):
                self.stop(i)
            self.count = instances
            self.history.append(instances)

    def kill_task(self, task: tuple[int, int]) -> None:
        self.killed.append(task[1])
        self.stop(task[1])

    def stop(self, i: int) -> None:
        p = self.procs.pop(i, None)
        if p is not None:  # as the agent stops a task: SIGTERM, SIGKILL after a grace
            p.terminate()
            try:
                p.wait(3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def close(self) -> None:
        for i in list(self.procs):
            self.stop(i)


def wait_until(cond: Any, timeout: float) -> bool:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if cond():
            return True
        time.sleep(0.1)
    return bool(cond())


@unittest.skipIf(PacelineCluster is None, "needs python3-distributed")
class PacelineClusterTest(unittest.TestCase):

    def setUp(self) -> None:
        self.job = LocalJob()
        self.cluster = PacelineCluster(self.job, job_id=7, host="127.0.0.1",  # type: ignore[arg-type]
                                       port=0)
        self.job.scheduler = self.cluster.scheduler_address

    def tearDown(self) -> None:
        self.cluster.close()
        self.job.close()

    def test_scale_grows_the_job_then_retires_the_highest_workers_first(self) -> None:
        self.cluster.scale(3)
        self.assertEqual(self.job.count, 4)  # the driver and 3 workers
        self.assertTrue(wait_until(lambda: self.cluster.observed == {1, 2, 3}, 60),
                        self.cluster.observed)
        self.assertEqual(len(self.cluster.startup_latencies), 3)
        self.cluster.scale(1)
        self.assertEqual(self.job.count, 2)
        self.assertTrue(wait_until(lambda: self.cluster.observed == {1}, 30),
                        self.cluster.observed)
        self.assertEqual(self.job.killed, [])  # only the top ones went: nothing to kill
        # Closing leaves the driver alone.
        self.cluster.close()
        self.assertEqual(self.job.count, 1)

    def test_adaptive_adds_workers_under_load_and_removes_them_when_idle(self) -> None:
        self.cluster.adapt(minimum=0, maximum=3, interval="200ms", wait_count=3,
                           target_duration="1s")
        # Defined here, not at the module's top: a nested function travels by value, so the
        # worker processes (which cannot import this test module) can run it.
        def slow_square(block: Any) -> Any:
            time.sleep(0.05)
            return block * block

        with DaskClient(self.cluster) as client:
            x = da.arange(400_000, chunks=2_000, dtype=np.int64)  # type: ignore[attr-defined]
            slow = x.map_blocks(slow_square, dtype=np.int64)  # 200 chunks
            total = int(slow.sum().compute())
        n = 400_000
        self.assertEqual(total, (n - 1) * n * (2 * n - 1) // 6)
        self.assertGreater(max(self.job.history), 1, self.job.history)
        self.assertTrue(wait_until(lambda: self.job.count == 1, 60), self.job.history)


if __name__ == "__main__":
    unittest.main()
