#!/usr/bin/env python3
"""How fast a Dask worker comes up on Paceline, before and after a change to the worker.

Usage: scripts/bench_dask_scaleup.py BUILD_DIR --before REV [--rounds 3] [--runs 10]
                                     [--hosts 4] [--out FILE]

Brings up the multi-host bed (scripts/netns-cluster.sh up HOSTS: one agent per network
namespace, the master on the bridge over TLS) and installs the Python client twice, offline,
into venvs made with --system-site-packages (Debian's python3-distributed): "before" from the
commit REV (clients/python with the protos and CMakeLists.txt of REV), "after" from the working
tree. Then, ROUNDS times, alternately before and after, it runs the job of
examples/frameworks/dask/job.yaml with the driver replaced by that version's scaleup.py RUNS
(each driver ten times scales to one worker, waits for it to register with the scheduler,
scales back to none) and with the worker's command of that version's job.yaml. The latency is
the driver's own: from just before its UpdateJob to the scheduler's "worker added" reaching the
cluster manager (PacelineCluster.startup_latencies).

It prints p50 and p99 (nearest rank) of each version over all its runs, per round too, as a
markdown report (also written to --out FILE) with the commits, the machine, its load and the
method. Needs root. The bed is taken down at the end,
also after a failure.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from netns_bed import REPO, Bed, percentile, machine


POOL = """
description: dask scale-up benchmark
resources:
  cpu:    {reservation: 4, limit: 8}
  memory: {reservation: 6Gi}
"""


def install(name, source, shared):
    """A venv at shared/NAME with the client from `source` (a tree holding clients/python,
    proto and CMakeLists.txt); returns the venv's python."""
    venv = os.path.join(shared, name)
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet", "--no-index",
                    "--no-cache-dir", "--disable-pip-version-check",
                    os.path.join(source, "clients", "python")], check=True)
    return os.path.join(venv, "bin", "python")


def export(rev, into):
    """The tree of commit `rev` (what install needs, and the example) into `into`."""
    os.makedirs(into)
    archive = subprocess.run(["git", "-C", REPO, "archive", rev, "clients/python", "proto",
                              "CMakeLists.txt", "examples/frameworks/dask"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)


def job_spec(tree, python, shared, name, runs):
    """The example's job.yaml of `tree`, its driver scaleup.py RUNS, run by `python`."""
    with open(os.path.join(tree, "examples", "frameworks", "dask", "job.yaml")) as f:
        spec = f.read()
    scaleup = os.path.join(shared, f"scaleup-{name}.py")
    shutil.copy(os.path.join(tree, "examples", "frameworks", "dask", "scaleup.py"), scaleup)
    os.chmod(scaleup, 0o644)
    spec = spec.replace("python3 /opt/paceline/examples/dask/driver.py",
                        f"{python} {scaleup} {runs}")
    spec = spec.replace("python3 -m paceline.dask", f"{python} -m paceline.dask")
    spec = spec.replace("name: dask", f"name: dask-{name}")
    spec = spec.replace("resources: {cpu: 1, memory: 1Gi}", "resources: {cpu: 0.5, memory: 768Mi}")
    spec = spec.replace("resources: {cpu: 1, memory: 2Gi}", "resources: {cpu: 0.5, memory: 1Gi}")
    return spec


def one_round(bed, tmp, spec, n, timeout=600.0):
    path = os.path.join(tmp, f"job-{n}.yaml")
    with open(path, "w") as f:
        f.write(spec)
    job = json.loads(bed.cli("job", "create", "-f", path, "--pool", "/bench", "-o", "json"))
    job_id = job["job_id"]
    bed.cli("job", "wait", str(job_id), "--timeout", f"{int(timeout)}s")
    out = bed.cli("task", "logs", f"{job_id}/0")
    latencies = [float(m) for m in
                 re.findall(r"run \d+: worker registered ([0-9.]+)s after", out)]
    if not latencies:
        raise RuntimeError(f"job {job_id}: no latency in the driver's output:\n{out}")
    return latencies


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build_dir")
    p.add_argument("--before", required=True, help="the commit of the 'before' client")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--hosts", type=int, default=4)
    p.add_argument("--out", default="")
    args = p.parse_args()
    binary = os.path.abspath(os.path.join(args.build_dir, "paceline"))
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    before_rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", args.before],
                                check=True, capture_output=True, text=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="pl-dask-bench-")
    os.chmod(tmp, 0o755)
    shared = os.path.join(tmp, "shared")
    os.makedirs(shared)
    os.chmod(shared, 0o755)
    export(args.before, os.path.join(tmp, "before"))
    versions = {
        "before": (os.path.join(tmp, "before"),
                   install("venv-before", os.path.join(tmp, "before"), shared)),
        "after": (REPO, install("venv-after", REPO, shared)),
    }
    bed = Bed(binary, args.hosts, os.path.join(tmp, "bed"), memory="3Gi")
    loads = [os.getloadavg()[0]]
    results = {"before": [], "after": []}
    per_round = []
    try:
        with open(os.path.join(tmp, "pool.yaml"), "w") as f:
            f.write(POOL)
        bed.cli("pool", "create", "/bench", "-f", os.path.join(tmp, "pool.yaml"))
        n = 0
        for r in range(args.rounds):
            for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
                tree, python = versions[name]
                got = one_round(bed, tmp, job_spec(tree, python, shared, name, args.runs), n)
                n += 1
                results[name] += got
                loads.append(os.getloadavg()[0])
                per_round.append((r + 1, name, got))
                print(f"round {r + 1} {name}: p50 {statistics.median(got):.3f}s "
                      f"p99 {percentile(got, 99):.3f}s ({' '.join(f'{s:.2f}' for s in got)})",
                      flush=True)
    finally:
        bed.down()
        shutil.rmtree(tmp, ignore_errors=True)

    def summary(name):
        v = results[name]
        return (f"p50 {statistics.median(v):.3f} s, p99 {percentile(v, 99):.3f} s "
                f"(min {min(v):.3f}, max {max(v):.3f}, {len(v)} scale-ups)")

    ratio = statistics.median(results["before"]) / statistics.median(results["after"])
    lines = [
        f"# Dask on Paceline: scale-up request to worker registered, before and after "
        f"({datetime.date.today().isoformat()})",
        "",
        f"- Machine: {machine()}; load average {min(loads):.1f} to {max(loads):.1f} during "
        f"the runs.",
        f"- Code: before = the Python client and example at `{before_rev}`, after = at "
        f"`{head}` (with the working tree's changes); paceline built at `{head}`.",
        f"- Bed: `scripts/netns-cluster.sh up {args.hosts}` "
        f"({bed.up_line.split(': ', 1)[-1]}).",
        f"- Method: `scripts/bench_dask_scaleup.py BUILD --before {before_rev} --rounds "
        f"{args.rounds} --runs {args.runs}`; rounds alternate before/after.",
        "",
        "| round | version | p50 (s) | p99 (s) | scale-ups (s) |",
        "|---|---|---|---|---|",
    ]
    for r, name, got in per_round:
        lines.append(f"| {r} | {name} | {statistics.median(got):.3f} | "
                     f"{percentile(got, 99):.3f} | {' '.join(f'{s:.2f}' for s in got)} |")
    lines += ["", f"**before: {summary('before')}**", "", f"**after: {summary('after')}**", "",
              f"p50 ratio before/after: {ratio:.2f}x"]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
