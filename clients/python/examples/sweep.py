#!/usr/bin/env python3
"""A parameter sweep: 1,000 runs of a stand-in training script as one batch job, one instance
per (learning rate, seed) pair; waits for them and summarises their exit codes.

    python examples/sweep.py [--pool /batch] [--count 1000]

The client finds the master as the CLI does (Client.from_env). The pool is created (empty
spec: no reservation, no limit) if it does not exist. Exit status 0 when every instance ran to
an exit code, whatever the codes.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

import paceline

LEARNING_RATES = ["0.3", "0.1", "0.03", "0.01", "0.003"]

# Each instance finds its parameters from its index ($PACELINE_INSTANCE_ID): the learning rate
# cycles fastest. The stand-in "training" prints a line and diverges (exit 3) at the largest
# rate for one seed in four.
COMMAND = """\
set -- $LEARNING_RATES
n=$#
shift $((PACELINE_INSTANCE_ID % n))
lr=$1
seed=$((PACELINE_INSTANCE_ID / n))
echo "lr=$lr seed=$seed"
if [ "$lr" = 0.3 ] && [ $((seed % 4)) -eq 0 ]; then echo "lr=$lr seed=$seed diverged" >&2; exit 3; fi
"""


def params(instance: int) -> str:
    """The parameters of an instance, as its command computes them."""
    return f"lr={LEARNING_RATES[instance % len(LEARNING_RATES)]} seed={instance // len(LEARNING_RATES)}"


def ensure_pool(client: paceline.Client, path: str) -> None:
    """Creates the leaf pool `path` with an empty spec unless it exists."""
    try:
        client.get_pool(path)
    except paceline.NotFoundError:
        client.create_pool(path, {})
        print(f"created pool {path}")


def main() -> int:
    """Submits the sweep, waits for it and prints the exit codes it collected."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", default="/batch", help="leaf pool to run in (default /batch)")
    ap.add_argument("--count", type=int, default=1000, help="instances (default 1000)")
    args = ap.parse_args()

    with paceline.Client.from_env() as client:
        ensure_pool(client, args.pool)
        spec = {
            "name": "sweep",
            "instances": args.count,
            "labels": {"kind": "sweep"},
            "task": {
                "command": COMMAND,
                "env": {"LEARNING_RATES": " ".join(LEARNING_RATES)},
                "resources": {"cpu": 0.05, "memory": "16Mi"},
            },
        }
        started = time.monotonic()
        job_id = client.create_job(spec, pool=args.pool)
        print(f"job {job_id}: {args.count} instances")
        summary = client.wait(job_id, progress=True)
        elapsed = time.monotonic() - started

        tasks = client.tasks(job_id)
        codes = collections.Counter(t.exit_code for t in tasks)
        failed = [t for t in tasks if t.exit_code != 0]
        print(f"job {job_id} {summary.state} in {elapsed:.1f}s")
        for code, n in sorted(codes.items()):
            print(f"  exit {code:>3}: {n} instances" + ("  (no exit code)" if code == -1 else ""))
        for t in failed[:5]:
            print(f"  instance {t.instance} ({params(t.instance)}): exit {t.exit_code}")
        if len(failed) > 5:
            print(f"  ... and {len(failed) - 5} more")
        if failed:
            stderr = list(client.logs(failed[0], follow=False, stderr=True))
            print(f"  stderr of instance {failed[0].instance}: {stderr}")
        return 0 if codes.get(-1, 0) == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except paceline.PacelineError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
