"""A task's credential from Python: Client.from_task() inside a task with an identity (the
discovery on files, and a real controller task against the `paceline up` of run_tests.sh that
scales its own job and is refused another's)."""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path
from typing import Any

import paceline
from paceline import discovery
from paceline._transport import Transport

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


class TaskSettingsTest(unittest.TestCase):
    """What from_task reads from the task's environment, and the renewed token file."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)
        self.token_file = self.root / "token"
        self.token_file.write_text("pltk_first\n")
        (self.root / "ca.pem").write_bytes(PEM)
        self.env = {"PACELINE_TASK_TOKEN_FILE": str(self.token_file),
                    "PACELINE_ADDR": "10.0.0.1:5390,10.0.0.2:5390",
                    "PACELINE_CA": str(self.root / "ca.pem"),
                    "PACELINE_JOB_ID": "12", "PACELINE_INSTANCE_ID": "0",
                    "PACELINE_RUN_ID": "12/0/3"}

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def test_the_task_finds_its_masters_credential_and_ca(self) -> None:
        s = discovery.task_settings(self.env)
        self.assertEqual(s.addrs, ("10.0.0.1:5390", "10.0.0.2:5390"))
        self.assertEqual(s.token, "pltk_first")
        self.assertEqual(s.ca_pem, PEM)
        self.assertEqual(s.token_file, str(self.token_file))
        client = paceline.Client.from_task(environ=self.env)
        self.assertEqual(client.identity, paceline.TaskIdentity(12, 0, 3))
        client.close()

    def test_from_env_takes_the_task_token_file_after_paceline_token(self) -> None:
        s = discovery.resolve(environ=self.env, cwd=self.root)
        self.assertEqual((s.token, s.token_file), ("pltk_first", str(self.token_file)))
        s = discovery.resolve(environ={**self.env, "PACELINE_TOKEN": "mine"}, cwd=self.root)
        self.assertEqual((s.token, s.token_file), ("mine", ""))

    def test_a_renewed_file_is_read_again(self) -> None:
        t = Transport(discovery.task_settings(self.env), 1.0)
        self.assertEqual(t.metadata, (("authorization", "Bearer pltk_first"),))
        # The agent replaces the file (written beside it, renamed over it).
        new = self.root / "token.new"
        new.write_text("pltk_second\n")
        os.replace(new, self.token_file)
        self.assertEqual(t.metadata, (("authorization", "Bearer pltk_second"),))
        t.close()

    def test_outside_a_task_with_an_identity_it_says_so(self) -> None:
        with self.assertRaisesRegex(paceline.InvalidArgumentError, "not inside a task with an"):
            paceline.Client.from_task(environ={"PACELINE_ADDR": "a:1"})
        env = dict(self.env)
        del env["PACELINE_ADDR"]
        with self.assertRaisesRegex(paceline.InvalidArgumentError, "PACELINE_ADDR"):
            paceline.Client.from_task(environ=env)
        env = {**self.env, "PACELINE_JOB_ID": ""}
        with self.assertRaisesRegex(paceline.InvalidArgumentError, "PACELINE_JOB_ID"):
            discovery.task_identity(env)


# What the controller task runs, with the venv's Python: it scales its own job to 2, and is
# refused the other job and the pools.
DRIVER = textwrap.dedent("""\
    import paceline
    c = paceline.Client.from_task()
    me = c.identity
    print("identity", me.job_id, me.instance, me.run, flush=True)
    print("whoami", c.whoami().user, flush=True)
    c.update_job(me.job_id, instances=2)
    print("scaled", flush=True)
    try:
        c.update_job(OTHER, instances=3)
    except paceline.PermissionDeniedError as e:
        print("other refused:", e, flush=True)
    try:
        c.pools()
    except paceline.PermissionDeniedError:
        print("pools refused", flush=True)
    import time
    time.sleep(600)
    """)


class FromTaskAgainstTheMasterTest(unittest.TestCase):
    """A controller task of the local cluster uses its credential through the client."""

    def setUp(self) -> None:
        if not os.environ.get("PACELINE_TEST_CLUSTER"):
            raise unittest.SkipTest("needs a master: run clients/python/tests/run_tests.sh")
        self.client = paceline.Client.from_env()
        self.pool = "/pytask"
        try:
            self.client.create_pool(self.pool, {})
        except paceline.AlreadyExistsError:
            pass
        self.jobs: list[int] = []

    def tearDown(self) -> None:
        for job in self.jobs:
            self.client.kill_job(job)
        self.client.close()

    def job(self, name: str, instances: int, **overrides: Any) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "name": name, "instances": instances,
            "task": {"command": "sleep 600", "resources": {"cpu": 0.05, "memory": "32Mi"}}}
        if overrides:
            spec["instance_overrides"] = {0: overrides}
        return spec

    def test_a_controller_scales_its_own_job_and_nothing_else(self) -> None:
        other = self.client.create_job(self.job("other", 1), pool=self.pool)
        self.jobs.append(other)
        script = Path(tempfile.mkdtemp(prefix="pl-driver-", dir=os.getcwd())) / "driver.py"
        script.write_text(DRIVER.replace("OTHER", str(other)))
        script.parent.chmod(0o755)
        script.chmod(0o644)
        job = self.client.create_job(self.job(
            "driver", 1, controller=True,
            command=f"{sys.executable} {script}"), pool=self.pool)
        self.jobs.append(job)
        until = time.monotonic() + 60
        while True:
            lines = list(self.client.logs((job, 0), follow=False))
            if "pools refused" in lines or time.monotonic() > until:
                break
            time.sleep(0.3)
        err = "\n".join(self.client.logs((job, 0), follow=False, stderr=True))
        self.assertIn("pools refused", lines, err)
        self.assertIn(f"identity {job} 0 1", lines)
        self.assertIn(f"whoami task:{job}/0/1", lines)
        self.assertIn("scaled", lines)
        refused = [line for line in lines if line.startswith("other refused:")]
        self.assertEqual(len(refused), 1, lines)
        self.assertIn(f"is not the task's own job (job {job})", refused[0])
        self.assertEqual(len(self.client.tasks(job)), 2)
        self.assertEqual(len(self.client.tasks(other)), 1)


if __name__ == "__main__":
    unittest.main()
