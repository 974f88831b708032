"""paceline.dask_worker, the worker process of a Dask job, against a real scheduler in this
process: it registers named after its instance on its host's address and port, leaves when the
scheduler retires it and when it gets SIGTERM (exit 0 both times), and says why when it cannot
find the scheduler. Its lookup through the API runs in tests/e2e/frameworks_dask_e2e_test.cc."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import unittest
from typing import Any, Optional

try:
    from distributed import Scheduler
except ImportError:  # pragma: no cover (Debian's python3-distributed is a test dependency)
    Scheduler = None  # type: ignore[assignment,misc]

# Only what the worker reads; none of the caller's PACELINE_* variables.
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("PACELINE_")}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_worker(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "paceline.dask_worker", *args],
                            env={**BASE_ENV, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


class UsageTest(unittest.TestCase):

    def test_outside_a_task_without_a_scheduler_it_says_what_is_missing(self) -> None:
        p = start_worker([], {})
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 2, err)
        self.assertIn("PACELINE_JOB_ID", err)

    def test_a_lookup_that_fails_is_reported_by_the_worker(self) -> None:
        # A job's instance without a credential: the forked lookup fails, the worker says so.
        p = start_worker([], {"PACELINE_JOB_ID": "7", "PACELINE_INSTANCE_ID": "1"})
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 1, err)
        self.assertIn("finding the scheduler (instance 0 of this task's job)", err)

    def test_bad_options_are_refused(self) -> None:
        p = start_worker(["--nthreads", "0", "--scheduler", "tcp://127.0.0.1:1"], {})
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 2, err)
        self.assertIn("--nthreads: 0; expected 1 or more", err)


@unittest.skipIf(Scheduler is None, "needs python3-distributed")
class WorkerTest(unittest.TestCase):

    def setUp(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.scheduler: Any = self.loop.run_until_complete(self._start_scheduler())
        self.proc: Optional[subprocess.Popen[str]] = None

    async def _start_scheduler(self) -> Any:
        assert Scheduler is not None
        return await Scheduler(host="127.0.0.1", port=0, dashboard=False,
                               dashboard_address=None)

    def tearDown(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        self.loop.run_until_complete(self.scheduler.close())
        self.loop.close()

    def wait(self, cond: Any, timeout: float) -> bool:
        async def poll() -> bool:
            until = time.monotonic() + timeout
            while time.monotonic() < until:
                if cond():
                    return True
                await asyncio.sleep(0.05)
            return bool(cond())
        return self.loop.run_until_complete(poll())

    def start(self, instance: int, port: int) -> subprocess.Popen[str]:
        self.proc = start_worker(
            ["--scheduler", self.scheduler.address, "--memory-limit", "0"],
            {"PACELINE_INSTANCE_ID": str(instance), "PACELINE_HOST_ADDRESS": "127.0.0.1",
             "PACELINE_PORT_DASK": str(port)})
        return self.proc

    def test_registers_as_its_instance_and_leaves_on_sigterm(self) -> None:
        port = free_port()
        p = self.start(5, port)
        self.assertTrue(self.wait(lambda: bool(self.scheduler.workers) or p.poll() is not None,
                                  120), "the worker did not register")
        [(address, ws)] = list(self.scheduler.workers.items())
        self.assertEqual(address, f"tcp://127.0.0.1:{port}")
        self.assertEqual(ws.name, 5)
        p.send_signal(signal.SIGTERM)
        self.assertTrue(self.wait(lambda: p.poll() is not None, 60), "still running")
        out, err = p.communicate()
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("SIGTERM, closing", out)
        self.assertTrue(self.wait(lambda: not self.scheduler.workers, 30),
                        "the scheduler still has the worker")

    def test_retired_by_the_scheduler_it_exits_zero(self) -> None:
        p = self.start(2, free_port())
        self.assertTrue(self.wait(lambda: bool(self.scheduler.workers) or p.poll() is not None,
                                  120), "the worker did not register")
        self.loop.run_until_complete(
            self.scheduler.retire_workers(names=[2], close_workers=True, remove=True))
        self.assertTrue(self.wait(lambda: p.poll() is not None, 60), "still running")
        _, err = p.communicate()
        self.assertEqual(p.returncode, 0, err)
        self.assertFalse(self.scheduler.workers)


if __name__ == "__main__":
    unittest.main()
