#!/usr/bin/env python3
"""How fast a PyTorch gang meets: submit -> all 4 ranks past init_process_group.

Usage: scripts/bench_ddp_rendezvous.py [BUILD_DIR] [--runs 10] [--hosts 4] [--out FILE]

Brings up the multi-host bed (scripts/netns-cluster.sh up HOSTS: one agent per network
namespace, a master on the bridge), then submits the DDP example
(examples/frameworks/pytorch-ddp/train.py with --steps 0: meet, build the model, end) as a gang
of HOSTS with `gang.rendezvous: pytorch` and one rank per host, RUNS times one after the other,
after one warm-up run that is not counted (it reads torch from a cold page cache). For each run
it records, from the moment just before `paceline job create` is started:

  running    the last rank's RUNNING as its agent reported it (task list, started_at)
  started    the last rank's Python process started (the script's first line, before imports)
  imported   the last rank had imported torch
  past init  the last rank returned from init_process_group (every rank has met)

and, per run, the rendezvous itself: from the last rank's import to the last rank past init.

It prints p50 and p99 (nearest rank) of each as a markdown report, also written to --out
(default bench/results/ddp-rendezvous-DATE.md) with the commit, the machine and the method.
Needs root (namespaces, cgroups). The bed is taken down at the end, also after a failure.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from netns_bed import REPO, Bed, percentile, machine

TRAIN = os.path.join(REPO, "examples", "frameworks", "pytorch-ddp", "train.py")

POOL = """
description: rendezvous benchmark
resources:
  cpu:    {reservation: 4, limit: 8}
  memory: {reservation: 4Gi}
"""

JOB = """
name: ddp-bench-{n}
type: batch
instances: {hosts}
sla: {{min_running_instances: {hosts}}}
gang: {{rendezvous: pytorch, restart: gang}}
task:
  command: "/usr/bin/python3 {shared}/train.py --steps 0 --out-dir {shared}/out-{n}"
  resources: {{cpu: 0.5, memory: 1Gi}}
  constraints:
    - {{max_per_host: 1}}
"""


def one_run(bed, tmp, shared, hosts, n, timeout=120.0):
    spec = os.path.join(tmp, f"job-{n}.yaml")
    with open(spec, "w") as f:
        f.write(JOB.format(n=n, hosts=hosts, shared=shared))
    out_dir = os.path.join(shared, f"out-{n}")
    os.makedirs(out_dir)
    os.chmod(out_dir, 0o777)
    submitted = time.time()
    job = json.loads(bed.cli("job", "create", "-f", spec, "--pool", "/bench", "-o", "json"))
    job_id = job["job_id"]
    deadline = time.time() + timeout
    timings = {}
    while len(timings) < hosts:
        if time.time() > deadline:
            raise RuntimeError(f"run {n}: {len(timings)} of {hosts} ranks past init after "
                               f"{timeout:.0f} s")
        for r in range(hosts):
            path = os.path.join(out_dir, f"timing-{r}.json")
            if r not in timings and os.path.exists(path):
                with open(path) as f:
                    timings[r] = json.load(f)
        time.sleep(0.01)
    bed.cli("job", "wait", str(job_id), "--timeout", f"{int(timeout)}s")
    tasks = json.loads(bed.cli("task", "list", str(job_id), "-o", "json"))["tasks"]
    states = {t["state"] for t in tasks}
    if states != {"SUCCEEDED"}:
        raise RuntimeError(f"run {n}: tasks ended {sorted(states)}")
    running = max(int(t["started_at_unix_ms"]) for t in tasks) / 1000.0
    return {
        "running": running - submitted,
        "started": max(t["started"] for t in timings.values()) - submitted,
        "imported": max(t["imported"] for t in timings.values()) - submitted,
        "past_init": max(t["past_init"] for t in timings.values()) - submitted,
        "rendezvous": (max(t["past_init"] for t in timings.values()) -
                       max(t["imported"] for t in timings.values())),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", nargs="?", default=os.path.join(REPO, "build", "release"))
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--hosts", type=int, default=4)
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    p.add_argument("--out", default=os.path.join(REPO, "bench", "results",
                                                 f"ddp-rendezvous-{day}.md"))
    args = p.parse_args()
    binary = os.path.abspath(os.path.join(args.build, "paceline"))
    if os.geteuid() != 0:
        sys.exit("the bed needs root (network namespaces, cgroups)")
    if not os.access(binary, os.X_OK):
        sys.exit(f"no {binary}: build it first")
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    host = machine(with_load=True)

    tmp = tempfile.mkdtemp(prefix="ddp-bench-")
    os.chmod(tmp, 0o755)
    shared = os.path.join(tmp, "shared")
    os.makedirs(shared)
    os.chmod(shared, 0o777)
    shutil.copy(TRAIN, os.path.join(shared, "train.py"))
    os.chmod(os.path.join(shared, "train.py"), 0o644)
    bed = Bed(binary, args.hosts, os.path.join(tmp, "bed"), memory="4Gi")
    try:
        with open(os.path.join(tmp, "pool.yaml"), "w") as f:
            f.write(POOL)
        bed.cli("pool", "create", "/bench", "-f", os.path.join(tmp, "pool.yaml"))
        warm = one_run(bed, tmp, shared, args.hosts, 0)
        runs = [one_run(bed, tmp, shared, args.hosts, n) for n in range(1, args.runs + 1)]
    finally:
        bed.down()
    shutil.rmtree(tmp, ignore_errors=True)

    def row(name, key):
        v = [r[key] * 1000 for r in runs]
        return (f"| {name} | {percentile(v, 50):,.0f} | {percentile(v, 99):,.0f} | "
                f"{min(v):,.0f} | {max(v):,.0f} |")

    report = "\n".join([
        f"# PyTorch gang of {args.hosts}: submit to all ranks past init_process_group, {day}",
        "",
        f"- Machine: {host}.",
        f"- Code: commit `{commit}`" + (" with uncommitted changes" if dirty else "") +
        ", Release build; torch " + torch_version() + " (Debian python3-torch).",
        f"- Bed: `scripts/netns-cluster.sh up {args.hosts}` ({bed.up_line.split(': ', 1)[1]}): "
        "one agent per network namespace, the master on the bridge (TLS, cycle 20 ms).",
        f"- Command: `scripts/bench_ddp_rendezvous.py {args.build} --runs {args.runs} "
        f"--hosts {args.hosts}`.",
        "",
        f"Method: the example DDP script (`examples/frameworks/pytorch-ddp/train.py --steps 0`)"
        f" as one gang of {args.hosts} (`gang.rendezvous: pytorch`, `max_per_host: 1`), "
        f"submitted {args.runs} times one after the other after one warm-up run not counted "
        f"(warm-up: past init after {warm['past_init'] * 1000:,.0f} ms). Times from just "
        "before `paceline job create` starts to the last of the ranks reaching each point: "
        "*running* is its RUNNING as the agent reported it, *started* its Python process's "
        "first line (before `import torch`), *imported* the end of its imports, *past init* its "
        "return from "
        "`init_process_group(\"gloo\")` (every rank has met at MASTER_ADDR:MASTER_PORT); "
        "*rendezvous* is, within a run, from the last rank's import to the last rank past init. "
        "Percentiles are nearest-rank over the runs.",
        "",
        "| submit → last rank | p50 ms | p99 ms | min ms | max ms |",
        "|---|---:|---:|---:|---:|",
        row("running (scheduler + agent)", "running"),
        row("started (Python's first line)", "started"),
        row("imported torch", "imported"),
        row("past init_process_group", "past_init"),
        row("rendezvous: last import → last past init", "rendezvous"),
        "",
        f"Goal: the gang of {args.hosts} running within 1 s (p50) of the submit: "
        + ("met" if percentile([r["running"] for r in runs], 50) <= 1.0 else "NOT met")
        + f" (p50 {percentile([r['running'] for r in runs], 50) * 1000:,.0f} ms). "
        "What follows RUNNING is the task's own: Python's start and `import torch` "
        f"({args.hosts} imports at once on this machine's cores), then the rendezvous.",
        "",
        "The rendezvous row is bimodal (tens of milliseconds, or about a second): most likely "
        "when a rank dials rank 0's store in the moment before rank 0 listens on it (their "
        "imports end close together), its connection is refused and torch's client waits "
        "before it tries again; run one after the other with seconds between them, two ranks "
        "meet in 20 to 70 ms in either order. The import's time is the machine's: its cores "
        "were shared with other work during the runs (the load average above).",
        "",
    ])
    print(report)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(report)
    return 0


def torch_version():
    r = subprocess.run(["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "?"


if __name__ == "__main__":
    sys.exit(main())
