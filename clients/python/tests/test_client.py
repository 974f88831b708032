"""The client against a real `paceline up` (TLS), started by run_tests.sh in the current
directory: Client.from_env() finds it through ./data as the CLI does."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Callable

import grpc

import paceline
from paceline.v1 import common_pb2, host_pb2, job_pb2

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
POOL = "/pytest"
client: paceline.Client


def setUpModule() -> None:
    """Connects through ./data and waits for the local agent."""
    global client
    if not os.environ.get("PACELINE_TEST_CLUSTER"):
        raise unittest.SkipTest("needs a master: run clients/python/tests/run_tests.sh")
    client = paceline.Client.from_env()
    until = time.monotonic() + 60
    while not any(h.connected for h in client.call(
            "HostService", "ListHosts", host_pb2.ListHostsRequest(), write=False).hosts):
        if time.monotonic() > until:
            raise AssertionError("the local agent did not connect in 60 s")
        time.sleep(0.2)
    client.create_pool(POOL, {})


def tearDownModule() -> None:
    client.close()


def batch(name: str, command: str, instances: int = 1, **task: Any) -> dict[str, Any]:
    """A batch job spec of small tasks."""
    return {"name": name, "instances": instances,
            "task": {"command": command, "resources": {"cpu": 0.05, "memory": "16Mi"}, **task}}


def in_thread(f: Callable[[], Any], timeout: float) -> Any:
    """f() in a thread: its result, or a failure if it does not return within `timeout`."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = f()
        except BaseException as e:  # handed to the test's thread
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise AssertionError(f"did not return within {timeout} s")
    if "error" in out:
        raise out["error"]
    return out["value"]


class DiscoveryAgainstTheMasterTest(unittest.TestCase):
    """from_env finds the master and the calls authenticate, from each source."""

    def test_from_env_finds_the_local_master_through_data(self) -> None:
        s = client.settings
        self.assertEqual(s.addr_source, "./data/master.json")
        self.assertEqual(s.ca_source, "./data/tls/ca.pem")  # TLS, the master's default
        me = client.whoami()
        self.assertEqual((me.user, me.role, me.token_id), ("admin", "admin", "bootstrap"))

    def test_environment_variables(self) -> None:
        with tempfile.TemporaryDirectory() as empty:
            env = {"HOME": empty, "PACELINE_ADDR": client.settings.addr,
                   "PACELINE_TOKEN": client.settings.token,
                   "PACELINE_CA": os.path.abspath("data/tls/ca.pem")}
            with paceline.Client.from_env(environ=env, cwd=empty) as c:
                self.assertEqual(c.settings.addr_source, "$PACELINE_ADDR")
                self.assertEqual(c.whoami().role, "admin")

    def test_config_file(self) -> None:
        with tempfile.TemporaryDirectory() as home:
            os.mkdir(os.path.join(home, ".paceline"))
            with open(os.path.join(home, ".paceline", "config"), "w") as f:
                f.write(f"addr: {client.settings.addr}\ntoken: {client.settings.token}\n"
                        f"ca: {os.path.abspath('data/tls/ca.pem')}\n")
            with paceline.Client.from_env(environ={"HOME": home}, cwd=home) as c:
                self.assertEqual(c.settings.addr_source, "~/.paceline/config")
                self.assertEqual(c.whoami().role, "admin")

    def test_a_list_of_masters_skips_one_that_is_down(self) -> None:
        down = "127.0.0.1:1"
        with paceline.Client(f"{down},{client.settings.addr}", client.settings.token,
                             ca="data/tls/ca.pem") as c:
            with self.assertLogs("paceline", "WARNING") as logs:
                self.assertEqual(c.whoami().role, "admin")
            self.assertEqual(c.address, client.settings.addr)
            self.assertIn(f"retrying now at {client.settings.addr}", logs.output[0])


class ErrorsTest(unittest.TestCase):
    """Failures are PacelineErrors carrying the status code and the master's message."""

    def test_a_spec_error_is_invalid_argument_naming_the_field(self) -> None:
        spec = batch("typo", "true")
        spec["task"]["resources"] = {"cpu": 0.1, "memroy": "16Mi"}
        with self.assertRaises(paceline.InvalidArgumentError) as cm:
            client.create_job(spec, pool=POOL)
        e = cm.exception
        self.assertEqual(e.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("task.resources.memroy: unknown key 'memroy' (did you mean 'memory'?)",
                      e.message)
        self.assertTrue(e.request_id)  # the master's request id, for its audit log

    def test_a_spec_file_error_names_the_file(self) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write("name: bad\ninstances: 1\ntask:\n  command: true\n"
                    "  resources: {cpu: 0.1, memory: 2GB}\n")
            f.flush()
            with self.assertRaises(paceline.InvalidArgumentError) as cm:
                client.create_job(f.name, pool=POOL)
        self.assertIn(f"{f.name}:5:", cm.exception.message)
        self.assertIn("task.resources.memory: unknown unit 'GB'", cm.exception.message)

    def test_a_wrong_token_is_unauthenticated(self) -> None:
        with paceline.Client.from_env(token="not-the-token") as c:
            with self.assertRaises(paceline.UnauthenticatedError) as cm:
                c.whoami()
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAUTHENTICATED)
        self.assertIn("token", cm.exception.message)
        self.assertIn("$PACELINE_TOKEN", str(cm.exception))  # where tokens come from

    def test_a_missing_job_is_not_found(self) -> None:
        with self.assertRaises(paceline.NotFoundError) as cm:
            client.get_job(987654321)
        self.assertEqual(cm.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("987654321", cm.exception.message)

    def test_a_missing_pool_is_an_error(self) -> None:
        with self.assertRaises(paceline.PacelineError) as cm:
            client.create_job(batch("nowhere", "true"), pool="/no/such/pool")
        self.assertIn("/no/such/pool", cm.exception.message)

    def test_an_unreachable_master_is_unavailable_after_retries(self) -> None:
        with paceline.Client("127.0.0.1:1", timeout=1.0) as c:
            with self.assertLogs("paceline", "WARNING") as logs:
                with self.assertRaises(paceline.UnavailableError) as cm:
                    c.whoami()
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertIn("cannot reach the master at 127.0.0.1:1", cm.exception.message)
        self.assertIn("retrying in", logs.output[0])

    def test_plain_text_to_a_tls_master_is_refused(self) -> None:
        with paceline.Client(client.settings.addr, client.settings.token, timeout=1.0) as c:
            with self.assertLogs("paceline", "WARNING"):
                with self.assertRaises(paceline.UnavailableError) as cm:
                    c.whoami()
        self.assertIn("give the cluster's CA", str(cm.exception))


class JobsTest(unittest.TestCase):
    """Jobs run on the real agent: states and exit codes as the tasks ended."""

    def test_exit_codes_of_a_batch_job(self) -> None:
        job = client.create_job(batch("codes", "exit $((PACELINE_INSTANCE_ID % 2 * 7))", 4),
                                pool=POOL)
        seen: list[job_pb2.JobSummary] = []
        summary = in_thread(lambda: client.wait(job, progress=seen.append), 60)
        self.assertEqual(summary.state, "FAILED")
        self.assertEqual(dict(summary.task_counts), {"SUCCEEDED": 2, "FAILED": 2})
        self.assertEqual(seen[-1].state, "FAILED")  # progress saw the end
        tasks = client.tasks(job)
        self.assertEqual([t.instance for t in tasks], [0, 1, 2, 3])
        self.assertEqual([t.exit_code for t in tasks], [0, 7, 0, 7])
        self.assertEqual([common_pb2.Task.State.Name(t.state) for t in tasks],
                         ["SUCCEEDED", "FAILED", "SUCCEEDED", "FAILED"])
        self.assertEqual([t.instance for t in client.tasks(job, states=["FAILED"])], [1, 3])
        one = client.task(f"{job}/1")
        self.assertEqual(one.task.exit_code, 7)
        self.assertEqual(len(one.runs), 1)
        events = client.task_events((job, 1))
        self.assertEqual(common_pb2.Task.State.Name(events[-1].state), "FAILED")
        with self.assertRaises(paceline.JobFailedError) as cm:
            client.wait(job, progress=False, check=True)
        self.assertEqual(cm.exception.result.state, "FAILED")
        self.assertIn(job, [j.id for j in client.jobs(pool=POOL, states=["FAILED"])])

    def test_cron_runs_of_a_cron_job_newest_first(self) -> None:
        spec = batch("every2s", "true")
        spec["schedule"] = {"cron": "*/2 * * * * *", "keep_succeeded": 10}
        job = client.create_job(spec, pool=POOL)
        try:
            until = time.monotonic() + 30
            while len(client.cron_runs(job)) < 2:
                self.assertLess(time.monotonic(), until, "no second run in 30 s")
                time.sleep(0.2)
            runs = client.cron_runs(job)
            ticks = [int(r.labels["paceline.cron/tick"]) for r in runs]
            self.assertEqual(ticks, sorted(set(ticks), reverse=True))
            self.assertTrue(all(t % 2 == 0 for t in ticks))
            self.assertTrue(all(r.name.startswith("every2s-") for r in runs))
            self.assertEqual(client.get_job(job).job.state, "PENDING")  # never runs itself
        finally:
            client.kill_job(job)

    def test_wait_prints_progress_and_gives_up_after_its_timeout(self) -> None:
        job = client.create_job(batch("slow", "sleep 30"), pool=POOL)
        try:
            with self.assertRaises(paceline.DeadlineExceededError) as cm:
                client.wait(job, progress=False, timeout=1.0)
            self.assertIn(f"job {job} is still", cm.exception.message)
        finally:
            client.kill_job(job)
        self.assertEqual(in_thread(lambda: client.wait(job, progress=False), 60).state,
                         "KILLED")

    def test_logs_follow_yields_the_lines_and_stops_when_the_run_ends(self) -> None:
        job = client.create_job(
            batch("talk", "for i in 1 2 3; do echo line $i; sleep 0.5; done; echo oops >&2"),
            pool=POOL)
        # Asked at once: the task may not have started; logs waits for it.
        lines = in_thread(lambda: list(client.logs(f"{job}/0", follow=True)), 60)
        self.assertEqual(lines, ["line 1", "line 2", "line 3"])
        self.assertEqual(list(client.logs((job, 0), follow=False, stderr=True)), ["oops"])
        self.assertEqual(list(client.logs((job, 0), follow=False, tail=1)), ["line 3"])

    def test_logs_without_follow_of_a_task_not_placed_is_an_error(self) -> None:
        spec = batch("huge", "true")
        spec["task"]["resources"]["cpu"] = 64  # more than the host has: never placed
        job = client.create_job(spec, pool=POOL)
        try:
            with self.assertRaises(paceline.FailedPreconditionError):
                list(client.logs((job, 0), follow=False))
        finally:
            client.kill_job(job)

    def test_watch_yields_the_events_of_a_new_job(self) -> None:
        events: list[job_pb2.WatchEvent] = []
        stream = client.watch()  # every job

        def read() -> None:
            for e in stream:
                events.append(e)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 10
        while not events and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(events[0].WhichOneof("kind"), "started")
        job = client.create_job(batch("watched", "true", 2), pool=POOL)
        in_thread(lambda: client.wait(job, progress=False), 60)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
                e.job_id == job and e.WhichOneof("kind") == "job" and e.job.state == "SUCCEEDED"
                for e in events):
            time.sleep(0.05)
        stream.close()  # from another thread than the reader's
        reader.join(10)
        self.assertFalse(reader.is_alive(), "close() did not end the iteration")
        mine = [e for e in events if e.job_id == job]
        self.assertIn("SUCCEEDED", [e.job.state for e in mine if e.WhichOneof("kind") == "job"])
        finished = {e.task.instance for e in mine if e.WhichOneof("kind") == "task"
                    and e.task.event.state == common_pb2.Task.SUCCEEDED}
        self.assertEqual(finished, {0, 1})

    def test_watch_of_one_job_ends_with_the_job(self) -> None:
        job = client.create_job(batch("one", "sleep 1"), pool=POOL)
        events = in_thread(lambda: list(client.watch(job)), 60)
        self.assertEqual(events[0].WhichOneof("kind"), "started")
        self.assertEqual(events[-1].job.state, "SUCCEEDED")
        self.assertTrue(all(e.job_id == job for e in events[1:]))


class EndpointsTest(unittest.TestCase):
    """A service's endpoints, read and followed."""

    def test_endpoints_follow_a_service_and_end_with_it(self) -> None:
        spec = batch("ep", "exec sleep 600", 2, ports=["http"], kill_grace="1s",
                     deregistration_delay="0s")
        spec["type"] = "service"
        job = client.create_job(spec, pool=POOL)
        lists: list[job_pb2.JobEndpoints] = []
        stream = client.watch_endpoints(job)

        def read() -> None:
            for e in stream:
                lists.append(e)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                lists and sum(e.ready for e in lists[-1].endpoints) == 2):
            time.sleep(0.05)
        self.assertEqual(sum(e.ready for e in lists[-1].endpoints), 2, lists[-1:])
        now = client.endpoints(job)
        self.assertEqual(now.version, lists[-1].version)
        ports = {t.instance: t.ports["http"] for t in client.tasks(job)}
        self.assertEqual({e.instance: e.ports["http"] for e in now.endpoints}, ports)
        self.assertTrue(all(e.address and e.why_not_ready == "" for e in now.endpoints))
        self.assertEqual(len({e.version for e in lists}), len(lists), "one list per change")

        client.kill_task((job, 1))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                e.instance == 1 and not e.ready for e in lists[-1].endpoints):
            time.sleep(0.05)
        one = {e.instance: e for e in lists[-1].endpoints}
        self.assertFalse(one[1].ready, lists[-1])
        self.assertTrue(one[0].ready, lists[-1])

        client.kill_job(job)
        in_thread(lambda: client.wait(job, progress=False), 60)
        client.delete_job(job)
        reader.join(10)
        self.assertFalse(reader.is_alive(), "the deletion did not end the generator")
        self.assertTrue(lists[-1].deleted)

    def test_a_batch_job_has_no_endpoints(self) -> None:
        job = client.create_job(batch("no-ep", "exec sleep 600"), pool=POOL)
        try:
            with self.assertRaises(paceline.FailedPreconditionError) as e:
                client.endpoints(job)
            self.assertIn("only service and stateful jobs have endpoints", str(e.exception))
            with self.assertRaises(paceline.FailedPreconditionError):
                next(client.watch_endpoints(job))
        finally:
            client.kill_job(job)
        with self.assertRaises(paceline.NotFoundError):
            client.endpoints(10**9)


class UpdatesTest(unittest.TestCase):
    """A service's rolling update, through update_job and wait_update."""

    def test_rolling_update_of_a_service(self) -> None:
        def spec(version: str) -> dict[str, Any]:
            s = batch("svc", f"echo {version}; exec sleep 600", 2)
            s.update(type="service", update={"batch_size": 1, "min_healthy_time": "1s"})
            s["task"]["kill_grace"] = "1s"
            return s

        job = client.create_job(spec("v1"), pool=POOL)
        try:
            plan = client.update_job(job, spec("v2"), dry_run=True)
            self.assertEqual(sorted(plan.updated), [0, 1])
            self.assertEqual(client.get_job(job).job.version, 1)  # a dry run changes nothing
            u = client.update_job(job, spec("v2"))
            self.assertEqual(u.version, 2)
            seen: list[job_pb2.UpdateInfo] = []
            final = in_thread(lambda: client.wait_update(job, progress=seen.append, check=True), 90)
            self.assertEqual(final.state, job_pb2.Update.SUCCEEDED)
            self.assertEqual((final.done, final.total), (2, 2))
            self.assertEqual(seen[0].id, u.update_id)
            with self.assertRaises(paceline.AbortedError):  # version 1 is no longer current
                client.update_job(job, spec("v3"), version=1)
        finally:
            client.kill_job(job)


class ExamplesTest(unittest.TestCase):
    """The two example scripts, run as a user runs them (in this directory)."""

    def run_example(self, *argv: str, timeout: float) -> str:
        done = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                              timeout=timeout)
        self.assertEqual(done.returncode, 0, f"{argv}:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def test_sweep(self) -> None:
        count = int(os.environ.get("PACELINE_TEST_SWEEP_COUNT", "1000"))
        out = self.run_example(str(EXAMPLES / "sweep.py"), "--pool", POOL, "--count",
                               str(count), timeout=240)
        diverged = sum(1 for i in range(count) if i % 5 == 0 and (i // 5) % 4 == 0)
        self.assertIn(f"exit   0: {count - diverged} instances", out)
        self.assertIn(f"exit   3: {diverged} instances", out)
        self.assertIn("stderr of instance 0: ['lr=0.3 seed=0 diverged']", out)

    def test_rollout(self) -> None:
        out = self.run_example(str(EXAMPLES / "rollout.py"), "--pool", POOL, "--instances", "2",
                               timeout=120)
        self.assertRegex(out, r"update \d+ SUCCEEDED in ")
        self.assertEqual(out.count("serving v2 on instance"), 2)


if __name__ == "__main__":
    unittest.main()
