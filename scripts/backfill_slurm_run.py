#!/usr/bin/python3
"""Runs a backfill comparison workload (backfill_workload.py) through Slurm in real time.

    SLURM_CONF=... backfill_slurm_run.py WORKLOAD.json --out slurm.csv [--raw raw.txt]

Run it where the Slurm client commands reach the cluster: the Slurm peer harness's `slurm.sh`
runs any command in its network namespace with its SLURM_CONF, so scripts/bench-backfill.sh
calls `SLURM_HARNESS/slurm.sh /usr/bin/python3 scripts/backfill_slurm_run.py ...`.

Each job is submitted at its arrival time (from the start of the run) with
  sbatch --parsable -J NAME -o /dev/null -t LIMIT_MIN -N NODES (--ntasks-per-node=C | -n CPUS)
         --wrap "sleep RUN_S"
(a gang takes NODES whole nodes of C cpus; a small job CPUS cpus on one node). Then the script
waits until every job has its line in the jobcomp/filetxt log (JobCompLoc, read from
`scontrol show config`) and writes the common result CSV (backfill_metrics.py) with each job's
SubmitTime, StartTime and EndTime from that log, in seconds from the start of the run (Slurm
records whole seconds).
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backfill_workload  # noqa: E402


def jobcomp_path():
    out = subprocess.run(["scontrol", "show", "config"], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        k, _, v = line.partition("=")
        if k.strip() == "JobCompLoc":
            return v.strip()
    raise RuntimeError("scontrol show config has no JobCompLoc (jobcomp/filetxt is needed)")


def parse_jobcomp_line(line):
    """The fields of one jobcomp/filetxt line ('Key=value' separated by spaces)."""
    rec = {}
    for tok in line.split():
        k, sep, v = tok.partition("=")
        if sep:
            rec[k] = v
    return rec


def slurm_time(s):
    """A jobcomp time (local time, whole seconds) as epoch seconds."""
    return time.mktime(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timetuple())


def sbatch_args(j, cpus_per_node):
    args = ["sbatch", "--parsable", "-J", j["name"], "-o", "/dev/null", "-t",
            str(j["limit_min"]), "-N", str(j["nodes"])]
    if j["class"] == "small":
        args += ["-n", str(j["cpus"])]
    else:
        args += [f"--ntasks-per-node={cpus_per_node}"]
    return args + ["--wrap", f"sleep {j['run_s']}"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload")
    ap.add_argument("--out", required=True, help="the result CSV")
    ap.add_argument("--raw", help="also keep the jobs' jobcomp lines here")
    ap.add_argument("--timeout-s", type=float, default=3600,
                    help="give up when the jobs have not all ended this long after the start")
    a = ap.parse_args(argv)
    with open(a.workload) as f:
        w = json.load(f)
    comp = jobcomp_path()
    # Only lines written after this offset belong to this run.
    offset = os.path.getsize(comp) if os.path.exists(comp) else 0

    t0 = float(int(time.time()) + 1)  # a whole second: Slurm's times are whole seconds
    ids = {}
    worst_lag = 0.0
    for j in w["jobs"]:
        due = t0 + j["at_s"]
        now = time.time()
        if due > now:
            time.sleep(due - now)
        worst_lag = max(worst_lag, time.time() - due)
        r = subprocess.run(sbatch_args(j, w["cpus_per_node"]), capture_output=True, text=True)
        if r.returncode != 0:
            print(f"error: sbatch of {j['name']} failed: {r.stderr.strip()}", file=sys.stderr)
            return 1
        ids[r.stdout.strip().split(";")[0]] = j
    print(f"submitted {len(ids)} jobs; largest submission lag {worst_lag:.2f}s", file=sys.stderr)

    recs = {}
    while len(recs) < len(ids):
        if time.time() - t0 > a.timeout_s:
            print(f"error: {len(ids) - len(recs)} jobs have not ended after {a.timeout_s}s",
                  file=sys.stderr)
            return 1
        time.sleep(2)
        if not os.path.exists(comp):
            continue
        with open(comp) as f:
            f.seek(offset)
            for line in f:
                rec = parse_jobcomp_line(line)
                if rec.get("JobId") in ids:
                    recs[rec["JobId"]] = (rec, line)
    rows = []
    bad = 0
    for jid, j in ids.items():
        rec, _ = recs[jid]
        if rec.get("JobState") != "COMPLETED":
            bad += 1
        rows.append(backfill_workload.row(j, slurm_time(rec["SubmitTime"]) - t0,
                                          slurm_time(rec["StartTime"]) - t0,
                                          slurm_time(rec["EndTime"]) - t0))
    rows.sort(key=lambda r: r["name"])
    with open(a.out, "w") as f:
        backfill_workload.write_csv(rows, f)
    if a.raw:
        with open(a.raw, "w") as f:
            for jid in ids:
                f.write(recs[jid][1] if recs[jid][1].endswith("\n") else recs[jid][1] + "\n")
    print(f"wrote {a.out}: {len(rows)} jobs, {bad} not COMPLETED", file=sys.stderr)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
