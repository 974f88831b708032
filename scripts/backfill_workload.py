#!/usr/bin/python3
"""The backfill comparison's workload: one job list, from a seed, for Paceline and for Slurm.

    backfill_workload.py generate [--seed S] [--nodes N] [--cpus C] [--window-min M] > w.json
    backfill_workload.py scenario w.json [--backfill true|false] > scenario.yaml
    backfill_workload.py sim-csv w.json sim-report.json > paceline.csv

A workload is a cluster of N nodes x C cpus and a list of jobs, each with an arrival time
(`at_s`, from the start), a size, a run time (`run_s`, what the job really runs: `sleep`) and
a time limit (`limit_min`, whole minutes, as Slurm's --time takes it; at least the run time plus
30 s, as users over-ask). Three size classes:

  small   1-4 cpus on one node; a steady Poisson stream, run 1-6 minutes
  medium  node-exclusive gangs of 2 to N/4 whole nodes, run 2-6 minutes
  large   node-exclusive gangs of N/4+1 to N/2 whole nodes (half the cluster), run 4-8 minutes

The offered load (cpu-time asked / capacity over the arrival window) is about 1.1, so a queue
builds and the head of the line matters. The same seed gives the same list, byte for byte.

`scenario` writes the list as a `paceline sim` scenario: one host per node, one pool, each job
a batch job whose tasks run `task.duration` = run time with `sla.max_running_time` = limit; a
gang is `instances` = nodes with C cpus each and `sla.min_running_instances` = nodes, so every
task takes a whole host as the Slurm job takes whole nodes.

`sim-csv` turns the simulator's JSON report into the common result CSV (see
backfill_metrics.py): a job starts when its last instance first runs (submitted + the largest
latency) and ends when its last instance ends.
"""

import argparse
import json
import math
import random
import sys

CSV_HEADER = "name,class,cpus,nodes,submit_s,start_s,end_s,run_s,limit_s"


def generate(seed=1, nodes=32, cpus=32, window_min=18):
    if nodes < 8 or nodes % 4 != 0:
        raise ValueError(f"--nodes: {nodes}; expected a multiple of 4, at least 8")
    if cpus < 4:
        raise ValueError(f"--cpus: {cpus}; expected at least 4")
    if window_min < 5:
        raise ValueError(f"--window-min: {window_min}; expected at least 5")
    rng = random.Random(seed)
    window_s = window_min * 60
    capacity = nodes * cpus * window_s
    jobs = []

    def limit_for(run_s):
        # Users over-ask: 1.2x to 3x the run time, at least 30 s more, in whole minutes.
        want = max(run_s * rng.uniform(1.2, 3.0), run_s + 30)
        return int(math.ceil(want / 60.0))

    def add(cls, at_s, ncpu, nnodes, run_s):
        jobs.append({"class": cls, "at_s": at_s, "cpus": ncpu, "nodes": nnodes,
                     "run_s": run_s, "limit_min": limit_for(run_s)})

    # Large gangs: spread over the window so that each arrives at a busy cluster.
    n_large = max(2, window_min // 4)
    for i in range(n_large):
        at = int(window_s * (i + 0.3 + rng.uniform(-0.15, 0.15)) / n_large)
        nn = rng.randint(nodes // 4 + 1, nodes // 2)
        add("large", at, nn * cpus, nn, 60 * rng.randint(4, 8))
    # Medium gangs.
    n_medium = max(4, window_min // 2)
    for _ in range(n_medium):
        at = rng.randint(0, window_s - 60)
        nn = rng.randint(2, nodes // 4)
        add("medium", at, nn * cpus, nn, 60 * rng.randint(2, 6))
    # Small jobs fill the rest up to an offered load of about 1.1.
    asked = sum(j["cpus"] * j["run_s"] for j in jobs)
    small_budget = max(0.0, 1.1 * capacity - asked)
    mean_small = 2.5 * 210  # cpus x seconds of the mean small job
    n_small = int(small_budget / mean_small)
    gap = window_s / max(1, n_small)
    t = 0.0
    for _ in range(n_small):
        t += rng.expovariate(1.0 / gap)
        if t >= window_s:
            break
        add("small", int(t), rng.randint(1, 4), 1, rng.randint(60, 360))
    jobs.sort(key=lambda j: j["at_s"])  # stable: generation order at equal times
    for i, j in enumerate(jobs):
        j["name"] = f"j{i:04d}-{j['class']}"
    return {
        "seed": seed, "nodes": nodes, "cpus_per_node": cpus, "window_s": window_s,
        "offered_load": round(sum(j["cpus"] * j["run_s"] for j in jobs) / capacity, 3),
        "jobs": [{k: j[k] for k in ("name", "class", "at_s", "cpus", "nodes", "run_s",
                                    "limit_min")} for j in jobs],
    }


def scenario_yaml(w, backfill=None):
    """The workload as a `paceline sim` scenario (YAML flow maps; one line per job)."""
    cpus = w["cpus_per_node"]
    out = [
        f"# backfill comparison workload: seed {w['seed']}, {w['nodes']} nodes x {cpus} cpus,"
        f" {len(w['jobs'])} jobs (scripts/backfill_workload.py)",
        f"seed: {w['seed']}",
        "cycle_every: 1s",
        "report_every: 60s",
    ]
    if backfill is not None:
        out.append(f"backfill: {'true' if backfill else 'false'}")
    out += [
        "hosts:",
        f"  - {{count: {w['nodes']}, name: n, resources: {{cpu: {cpus}, memory: {cpus}Gi}}}}",
        "pools:",
        "  /batch: {}",
        "jobs:",
    ]
    for j in w["jobs"]:
        sla = f"max_running_time: {j['limit_min']}m"
        if j["class"] == "small":
            inst, cpu = 1, j["cpus"]
        else:
            inst, cpu = j["nodes"], cpus
            sla += f", min_running_instances: {inst}"
        out.append(
            f"  - {{at: {j['at_s']}s, pool: /batch, spec: {{name: {j['name']}, type: batch,"
            f" instances: {inst}, sla: {{{sla}}}, task: {{resources: {{cpu: {cpu},"
            f" memory: {cpu}Gi}}, duration: {j['run_s']}s}}}}}}")
    return "\n".join(out) + "\n"


def sim_rows(w, report):
    """Result rows (dicts) from a `paceline sim` JSON report of scenario_yaml(w)."""
    by_name = {j["name"]: j for j in w["jobs"]}
    rows = []
    for rj in report["jobs"]:
        j = by_name.get(rj["name"])
        if j is None:
            raise ValueError(f"report job '{rj['name']}' is not in the workload")
        if rj.get("refused"):
            raise ValueError(f"job {rj['name']} was refused: {rj['refused']}")
        lat = rj["latency_s"]
        inst = 1 if j["class"] == "small" else j["nodes"]
        if rj["finished_s"] is None or lat["count"] < inst:
            start = end = None
        else:
            start = rj["submitted_s"] + lat["max"]
            end = rj["finished_s"]
        rows.append(row(j, rj["submitted_s"], start, end))
    if len(rows) != len(w["jobs"]):
        raise ValueError(f"the report has {len(rows)} jobs; the workload {len(w['jobs'])}")
    return rows


def row(j, submit_s, start_s, end_s):
    return {"name": j["name"], "class": j["class"], "cpus": j["cpus"], "nodes": j["nodes"],
            "submit_s": submit_s, "start_s": start_s, "end_s": end_s, "run_s": j["run_s"],
            "limit_s": 60 * j["limit_min"]}


def write_csv(rows, f):
    f.write(CSV_HEADER + "\n")
    for r in rows:
        vals = []
        for k in CSV_HEADER.split(","):
            v = r[k]
            vals.append("" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v)))
        f.write(",".join(vals) + "\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write the workload as JSON")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--nodes", type=int, default=32)
    g.add_argument("--cpus", type=int, default=32)
    g.add_argument("--window-min", type=int, default=18)
    s = sub.add_parser("scenario", help="the workload as a paceline sim scenario")
    s.add_argument("workload")
    s.add_argument("--backfill", choices=["true", "false"])
    c = sub.add_parser("sim-csv", help="a paceline sim JSON report as the result CSV")
    c.add_argument("workload")
    c.add_argument("report")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "generate":
            json.dump(generate(a.seed, a.nodes, a.cpus, a.window_min), sys.stdout, indent=1)
            sys.stdout.write("\n")
            return 0
        with open(a.workload) as f:
            w = json.load(f)
        if a.cmd == "scenario":
            bf = None if a.backfill is None else a.backfill == "true"
            sys.stdout.write(scenario_yaml(w, bf))
        else:
            with open(a.report) as f:
                write_csv(sim_rows(w, json.load(f)), sys.stdout)
    except (ValueError, KeyError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
