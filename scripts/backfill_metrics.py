#!/usr/bin/python3
"""The backfill comparison's figures, computed the same way from each run's result CSV.

    backfill_metrics.py --nodes N --cpus C [--windows T1,T2,...] LABEL=run.csv [LABEL=run.csv ...]

A result CSV (written by backfill_workload.py sim-csv and backfill_slurm_run.py) has one line
per job: name, class (small | medium | large), cpus, nodes, submit_s, start_s, end_s, run_s,
limit_s; times in seconds from the start of the run. Every run must hold the same jobs.

Per run (Markdown tables on stdout):
  makespan     the last end, from the start of the run (time 0)
  utilization  sum(cpus x (end - start)) / (N x C x makespan): the cpu-time the jobs held
  wait         start - submit; mean and p95 (nearest rank) per size class and over all jobs
  largest gang the wait of the gang with the most nodes (the earliest of equals)
  max gang wait the longest wait of any gang (medium or large)
  slowdown     mean bounded slowdown: max(1, (wait + run) / max(run, 10 s)), run = end - start
Then every gang's wait in each run, side by side. With --windows (times in seconds, rising),
one more table per run: for each window [0, T1), [T1, T2), ... [Tk, makespan), the utilization
within it (the cpu-time the jobs held inside the window over N x C x its length) and, of the
jobs submitted in it, per size class: how many, their wait's sum and their mean bounded slowdown.
It shows where in a run one schedule's waits come from against another's.
"""

import argparse
import csv
import math
import sys

CLASSES = ("small", "medium", "large")
BOUND_S = 10.0


def read_csv(path):
    rows = []
    with open(path, newline="") as f:
        for i, r in enumerate(csv.DictReader(f), start=2):
            try:
                rec = {"name": r["name"], "class": r["class"], "cpus": int(r["cpus"]),
                       "nodes": int(r["nodes"])}
                for k in ("submit_s", "start_s", "end_s", "run_s", "limit_s"):
                    if r[k] == "":
                        raise ValueError(f"{k} is empty (the job did not run)")
                    rec[k] = float(r[k])
            except (KeyError, ValueError, TypeError) as e:
                raise ValueError(f"{path}:{i}: {e}") from None
            if rec["class"] not in CLASSES:
                raise ValueError(f"{path}:{i}: class '{rec['class']}'; expected one of "
                                 + ", ".join(CLASSES))
            if not rec["submit_s"] <= rec["start_s"] <= rec["end_s"]:
                raise ValueError(f"{path}:{i}: expected submit_s <= start_s <= end_s")
            rows.append(rec)
    if not rows:
        raise ValueError(f"{path}: no jobs")
    return rows


def percentile(values, p):
    """Nearest rank: the smallest value with at least p % of the values at or below it."""
    v = sorted(values)
    if not v:
        return None
    k = max(1, math.ceil(p / 100.0 * len(v)))
    return v[k - 1]


def bounded_slowdown(r):
    run = r["end_s"] - r["start_s"]
    wait = r["start_s"] - r["submit_s"]
    return max(1.0, (wait + run) / max(run, BOUND_S))


def metrics(rows, nodes, cpus):
    makespan = max(r["end_s"] for r in rows)
    held = sum(r["cpus"] * (r["end_s"] - r["start_s"]) for r in rows)
    m = {"jobs": len(rows), "makespan_s": makespan,
         "utilization": held / (nodes * cpus * makespan) if makespan > 0 else 0.0,
         "slowdown": sum(bounded_slowdown(r) for r in rows) / len(rows), "wait": {}}
    for cls in CLASSES + ("all",):
        w = [r["start_s"] - r["submit_s"] for r in rows if cls in ("all", r["class"])]
        m["wait"][cls] = (len(w), sum(w) / len(w) if w else None, percentile(w, 95))
    gangs = [r for r in rows if r["class"] != "small"]
    if gangs:
        big = min(gangs, key=lambda r: (-r["nodes"], r["submit_s"], r["name"]))
        m["largest_gang"] = (big["name"], big["nodes"], big["start_s"] - big["submit_s"])
        m["max_gang_wait"] = max(r["start_s"] - r["submit_s"] for r in gangs)
    return m


def windows(rows, nodes, cpus, cuts):
    """[(start, end, utilization, {class: (jobs, wait sum, mean bounded slowdown)})], one per
    window of [0, cuts[0]), [cuts[0], cuts[1]), ... [cuts[-1], makespan)."""
    makespan = max(r["end_s"] for r in rows)
    edges = [0.0] + [c for c in cuts if c < makespan] + [makespan]
    out = []
    for i, (a, b) in enumerate(zip(edges, edges[1:])):
        last = i == len(edges) - 2  # the last window holds a job submitted at the makespan
        held = sum(r["cpus"] * max(0.0, min(b, r["end_s"]) - max(a, r["start_s"])) for r in rows)
        per = {}
        for cls in CLASSES:
            sub = [r for r in rows if r["class"] == cls
                   and a <= r["submit_s"] and (r["submit_s"] < b or last)]
            waits = [r["start_s"] - r["submit_s"] for r in sub]
            per[cls] = (len(sub), sum(waits),
                        sum(bounded_slowdown(r) for r in sub) / len(sub) if sub else None)
        out.append((a, b, held / (nodes * cpus * (b - a)), per))
    return out


def window_table(label, rows, nodes, cpus, cuts):
    out = ["", f"{label}, per window (jobs by submit time; waits summed, in s):", "",
           "| window (s) | utilization | " + " | ".join(
               f"{c}: jobs / wait sum / slowdown" for c in CLASSES) + " |",
           "|---|---:|" + "---:|" * len(CLASSES)]
    for a, b, util, per in windows(rows, nodes, cpus, cuts):
        cells = [f"{per[c][0]} / {per[c][1]:.0f} / {fmt(per[c][2], 3)}" for c in CLASSES]
        out.append(f"| {a:.0f}-{b:.0f} | {100 * util:.1f} % | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def parse_cuts(spec):
    try:
        cuts = [float(t) for t in spec.split(",")]
    except ValueError:
        raise ValueError(f"--windows '{spec}': expected times in seconds, e.g. 560,840") from None
    if any(c <= 0 for c in cuts) or any(b <= a for a, b in zip(cuts, cuts[1:])):
        raise ValueError(f"--windows '{spec}': expected rising times above 0")
    return cuts


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def table(runs, nodes, cpus):
    """runs: [(label, rows)]. The Markdown tables as one string."""
    names = [sorted(r["name"] for r in rows) for _, rows in runs]
    for (label, _), n in zip(runs, names):
        if n != names[0]:
            raise ValueError(f"run '{label}' does not hold the same jobs as '{runs[0][0]}'")
    ms = [(label, metrics(rows, nodes, cpus)) for label, rows in runs]
    out = ["| metric | " + " | ".join(label for label, _ in ms) + " |",
           "|---|" + "---:|" * len(ms)]

    def line(name, f):
        out.append(f"| {name} | " + " | ".join(f(m) for _, m in ms) + " |")

    line("jobs", lambda m: str(m["jobs"]))
    line("makespan (s)", lambda m: fmt(m["makespan_s"], 0))
    line("utilization", lambda m: f"{100 * m['utilization']:.1f} %")
    line("mean bounded slowdown", lambda m: fmt(m["slowdown"], 2))
    for cls in CLASSES + ("all",):
        n = ms[0][1]["wait"][cls][0]
        line(f"wait {cls} ({n} jobs): mean / p95 (s)",
             lambda m, c=cls: f"{fmt(m['wait'][c][1])} / {fmt(m['wait'][c][2])}")
    if "largest_gang" in ms[0][1]:
        g = ms[0][1]["largest_gang"]
        line(f"largest gang's wait ({g[0]}, {g[1]} nodes) (s)",
             lambda m: fmt(m["largest_gang"][2]))
        line("longest gang wait (s)", lambda m: fmt(m["max_gang_wait"]))
    gangs = sorted((r for r in runs[0][1] if r["class"] != "small"),
                   key=lambda r: (r["submit_s"], r["name"]))
    if gangs:
        out += ["", "Each gang's wait (s):", "",
                "| gang | nodes | run (s) | limit (s) | " + " | ".join(l for l, _ in runs) + " |",
                "|---|---:|---:|---:|" + "---:|" * len(runs)]
        by_run = [{r["name"]: r for r in rows} for _, rows in runs]
        for g in gangs:
            waits = [fmt(b[g["name"]]["start_s"] - b[g["name"]]["submit_s"]) for b in by_run]
            out.append(f"| {g['name']} | {g['nodes']} | {g['run_s']:.0f} | {g['limit_s']:.0f} | "
                       + " | ".join(waits) + " |")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--cpus", type=int, required=True, help="cpus per node")
    ap.add_argument("--windows", metavar="T1,T2,...",
                    help="also a per-window table per run, cut at these times (s)")
    ap.add_argument("runs", nargs="+", metavar="LABEL=CSV")
    a = ap.parse_args(argv)
    try:
        if a.nodes < 1 or a.cpus < 1:
            raise ValueError("--nodes and --cpus: expected at least 1")
        runs = []
        for spec in a.runs:
            label, sep, path = spec.partition("=")
            if not sep or not label or not path:
                raise ValueError(f"'{spec}': expected LABEL=CSV")
            runs.append((label, read_csv(path)))
        cuts = parse_cuts(a.windows) if a.windows else None
        sys.stdout.write(table(runs, a.nodes, a.cpus))
        for label, rows in runs if cuts else []:
            sys.stdout.write(window_table(label, rows, a.nodes, a.cpus, cuts))
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
