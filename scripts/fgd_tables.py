#!/usr/bin/env python3
"""Tables of `paceline sim --fill --protocol fgd` reports against the FGD paper's published runs.

Usage: scripts/fgd_tables.py --published bench/fgd-paper-published.csv --commit C --machine M \
           LIST=REPORT.json [LIST=REPORT.json ...] > TABLES.md

For every task list: the unallocated GPU at 100 % arrived per profile (mean, standard deviation,
standard error over the seeds), the paper's published mean, the difference, and whether it is
within 0.5 points; then every seed's figure; then Paceline's `default` against paper-fgd.
"""
import argparse
import csv
import json
import math
import statistics
import sys


def stats(values):
    mean = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, sd, sd / math.sqrt(len(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--published", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("reports", nargs="+", help="LIST=REPORT.json")
    args = ap.parse_args()

    published = {}
    with open(args.published) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            published.setdefault((row["task_list"], row["policy"]), {})[int(row["seed"])] = float(
                row["unallocated_pct"])

    out = []
    w = out.append
    w("Commit: `%s`. Machine: %s.\n" % (args.commit, args.machine))
    comparison = []
    for spec in args.reports:
        name, _, path = spec.partition("=")
        if not path:
            sys.exit("expected LIST=REPORT.json, got %r" % spec)
        report = json.load(open(path))
        opts = report["options"]
        seeds = [opts["seed"] + i for i in range(opts["repetitions"])]
        w("\n## %s\n" % report["trace"]["task_file"])
        w("%d nodes, %d GPUs, %d tasks; seeds %d..%d; arrivals to %g %% of the GPU capacity.\n" %
          (report["trace"]["nodes"], report["trace"]["gpus"], report["trace"]["tasks"], seeds[0],
           seeds[-1], opts["target_pct"]))
        w("\n| profile | unallocated GPU % at 100 % arrived | std | SE | paper | difference | within ±0.5 |")
        w("|---|---:|---:|---:|---:|---:|:---:|")
        per_seed = {}
        for profile in opts["profiles"]:
            at = report["profiles"][profile]["final"]["unallocated_at_100_pct"]
            values = {s["seed"]: s["unallocated_pct"] for s in at["seeds"]}
            per_seed[profile] = values
            mean, sd, se = stats(list(values.values()))
            paper = published.get((name, profile))
            if paper:
                pmean = statistics.mean(paper.values())
                diff = mean - pmean
                w("| %s | %.2f | %.2f | %.2f | %.2f | %+.2f | %s |" %
                  (profile, mean, sd, se, pmean, diff, "yes" if abs(diff) <= 0.5 else "**no**"))
            else:
                w("| %s | %.2f | %.2f | %.2f | | | |" % (profile, mean, sd, se))
        w("\nPer seed (Paceline's run, then the paper's run of the same seed number; the two "
          "draw different random sequences):\n")
        w("| profile | " + " | ".join(str(s) for s in seeds) + " |")
        w("|---|" + "---:|" * len(seeds))
        for profile, values in per_seed.items():
            w("| %s | %s |" % (profile, " | ".join("%.2f" % values[s] for s in seeds)))
            paper = published.get((name, profile))
            if paper:
                w("| (paper) | %s |" % " | ".join(
                    "%.2f" % paper[s] if s in paper else "" for s in seeds))
        if "default" in per_seed and "paper-fgd" in per_seed:
            d_mean, _, d_se = stats(list(per_seed["default"].values()))
            f_mean, _, f_se = stats(list(per_seed["paper-fgd"].values()))
            se = math.sqrt(d_se ** 2 + f_se ** 2)
            comparison.append((name, d_mean, d_se, f_mean, f_se, d_mean - f_mean, se))

    if comparison:
        w("\n## Paceline's `default` against FGD\n")
        w("| task list | default | SE | paper-fgd | SE | difference | SE of the difference | default better by more than the SE |")
        w("|---|---:|---:|---:|---:|---:|---:|:---:|")
        for name, dm, dse, fm, fse, diff, se in comparison:
            w("| %s | %.2f | %.2f | %.2f | %.2f | %+.2f | %.2f | %s |" %
              (name, dm, dse, fm, fse, diff, se, "yes" if -diff > se else "**no**"))
    print("\n".join(out))


if __name__ == "__main__":
    main()
