#!/usr/bin/env python3
"""A service rollout: starts a service of 3 instances at version v1, rolls it to v2 one
instance at a time, and follows the rolling update until it ends.

    python examples/rollout.py [--pool /services] [--instances 3] [--keep]

The client finds the master as the CLI does (Client.from_env). The pool is created (empty
spec) if it does not exist. The service is killed at the end unless --keep is given. Exit
status 0 when the update SUCCEEDED and every instance runs v2.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any

import paceline
from paceline.v1 import common_pb2, job_pb2

# A stand-in web server: says which version it is, then stays up.
COMMAND = 'echo "serving $VERSION on instance $PACELINE_INSTANCE_ID"; exec sleep 3600'


def service(name: str, instances: int, version: str) -> dict[str, Any]:
    """The service's spec at `version`."""
    return {
        "name": name,
        "type": "service",
        "instances": instances,
        "task": {
            "command": COMMAND,
            "env": {"VERSION": version},
            "resources": {"cpu": 0.05, "memory": "16Mi"},
            "kill_grace": "2s",
        },
        "update": {"batch_size": 1, "min_healthy_time": "2s"},
    }


def ensure_pool(client: paceline.Client, path: str) -> None:
    """Creates the leaf pool `path` with an empty spec unless it exists."""
    try:
        client.get_pool(path)
    except paceline.NotFoundError:
        client.create_pool(path, {})
        print(f"created pool {path}")


def wait_running(client: paceline.Client, job_id: int, instances: int) -> None:
    """Blocks until every instance of the service is RUNNING."""
    while True:
        tasks = client.tasks(job_id, states=["RUNNING"])
        if len(tasks) == instances:
            return
        time.sleep(0.5)


def print_task_events(events: paceline.EventStream) -> None:
    """Prints the service's task transitions as the watch delivers them."""
    for e in events:
        if e.WhichOneof("kind") == "task":
            t = e.task.event
            print(f"  instance {e.task.instance} run {t.run}: "
                  f"{common_pb2.Task.State.Name(t.state)} {t.reason}".rstrip())


def print_update(u: job_pb2.UpdateInfo) -> None:
    """One line of the update's progress."""
    print(f"update {u.id} {job_pb2.Update.State.Name(u.state)}: {u.done}/{u.total} done, "
          f"{u.in_flight} in flight, {u.failed} failed")


def main() -> int:
    """Starts the service, rolls it to v2 and follows the update."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", default="/services", help="leaf pool to run in (default /services)")
    ap.add_argument("--instances", type=int, default=3, help="instances (default 3)")
    ap.add_argument("--keep", action="store_true", help="leave the service running")
    args = ap.parse_args()

    with paceline.Client.from_env() as client:
        ensure_pool(client, args.pool)
        job_id = client.create_job(service("web", args.instances, "v1"), pool=args.pool)
        print(f"job {job_id}: service web v1, {args.instances} instances")
        try:
            wait_running(client, job_id, args.instances)
            print(f"job {job_id}: every instance RUNNING")
            print(f"  {next(iter(client.logs((job_id, 0), follow=False)), '')}")

            # Follow the instances' transitions while the update rolls.
            events = client.watch(job_id)
            follower = threading.Thread(target=print_task_events, args=(events,), daemon=True)
            follower.start()

            started = time.monotonic()
            u = client.update_job(job_id, service("web", args.instances, "v2"))
            print(f"update {u.update_id} to version {u.version}: {len(u.updated)} instances "
                  "to replace, one at a time")
            final = client.wait_update(job_id, progress=print_update)
            events.close()
            follower.join(5)
            print(f"update {final.id} {job_pb2.Update.State.Name(final.state)} in "
                  f"{time.monotonic() - started:.1f}s")

            lines = [next(iter(client.logs(t, follow=False)), "")
                     for t in client.tasks(job_id, states=["RUNNING"])]
            for line in lines:
                print(f"  {line}")
            ok = (final.state == job_pb2.Update.SUCCEEDED and len(lines) == args.instances
                  and all(line.startswith("serving v2") for line in lines))
            return 0 if ok else 1
        finally:
            if not args.keep:
                client.kill_job(job_id)
                print(f"job {job_id}: killed")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except paceline.PacelineError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
