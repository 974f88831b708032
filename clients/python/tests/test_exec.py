"""Client.exec against a real `paceline up` (run_tests.sh): a command inside a running task,
its stdin, stdout, stderr and exit code; the refusals for a task that is not there or not
running."""

from __future__ import annotations

import os
import time
import unittest

import paceline
from paceline.v1 import common_pb2

POOL = "/pyexec"
client: paceline.Client


def setUpModule() -> None:
    global client
    if not os.environ.get("PACELINE_TEST_CLUSTER"):
        raise unittest.SkipTest("needs a master: run clients/python/tests/run_tests.sh")
    client = paceline.Client.from_env()
    client.create_pool(POOL, {})


def tearDownModule() -> None:
    client.close()


def wait_running(job: int, timeout: float = 60) -> None:
    until = time.monotonic() + timeout
    while client.task((job, 0)).task.state != common_pb2.Task.RUNNING:
        if time.monotonic() > until:
            raise AssertionError(f"task {job}/0 did not run in {timeout} s")
        time.sleep(0.2)


class ExecTest(unittest.TestCase):
    job: int

    @classmethod
    def setUpClass(cls) -> None:
        cls.job = client.create_job(
            {"name": "exec-target", "instances": 1,
             "task": {"command": "echo ready > ready.txt; exec sleep 600",
                      "env": {"WHO": "the-task"},
                      "resources": {"cpu": 0.05, "memory": "16Mi"}}}, pool=POOL)
        wait_running(cls.job)

    @classmethod
    def tearDownClass(cls) -> None:
        client.kill_job(cls.job)

    def test_stdin_stdout_stderr_and_exit_code(self) -> None:
        code, out, err = client.exec(f"{self.job}/0",
                                     ["sh", "-c", "tr a-z A-Z; echo \"$WHO\" >&2; exit 5"],
                                     stdin="some input\n")
        self.assertEqual(code, 5)
        self.assertEqual(out, b"SOME INPUT\n")
        self.assertEqual(err, b"the-task\n")

    def test_runs_in_the_sandbox(self) -> None:
        deadline = time.monotonic() + 10
        while True:
            result = client.exec((self.job, 0), ["cat", "ready.txt"])
            if result.exit_code == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(result, paceline.ExecResult(0, b"ready\n", b""))

    def test_without_stdin_the_command_reads_end_of_file(self) -> None:
        self.assertEqual(client.exec((self.job, 0), ["wc", "-c"]).stdout.strip(), b"0")

    def test_refusals(self) -> None:
        with self.assertRaises(paceline.NotFoundError):
            client.exec((999999, 0), ["true"])
        with self.assertRaises(paceline.NotFoundError) as e:
            client.exec((self.job, 9), ["true"])
        self.assertIn("no instance 9", str(e.exception))
        done = client.create_job({"name": "done", "instances": 1,
                                  "task": {"command": "true",
                                           "resources": {"cpu": 0.05, "memory": "16Mi"}}},
                                 pool=POOL)
        client.wait(done, progress=False, timeout=60)
        with self.assertRaises(paceline.FailedPreconditionError) as e2:
            client.exec((done, 0), ["true"])
        self.assertIn("not RUNNING", str(e2.exception))
        with self.assertRaises(ValueError):
            client.exec((self.job, 0), [])


if __name__ == "__main__":
    unittest.main()
