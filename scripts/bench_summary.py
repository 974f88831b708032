#!/usr/bin/env python3
"""Summarises Google Benchmark JSON outputs into one report.

Usage: bench_summary.py --commit "paceline 0.1.0 (commit abc)" OUT1.json [OUT2.json ...]
Prints {"benchmark": "micro", "machine": {...}, "results": [...]} on stdout: per benchmark its
binary, name, time per iteration (ns, real and cpu) and items or bytes per second when reported.
"""
import json
import sys


def main(argv):
    if len(argv) < 3 or argv[0] != "--commit":
        sys.stderr.write(__doc__)
        return 2
    commit, files = argv[1], argv[2:]
    machine, results = {}, []
    for path in files:
        with open(path) as f:
            data = json.load(f)
        ctx = data.get("context", {})
        machine = machine or {
            "cpus": ctx.get("num_cpus"),
            "mhz_per_cpu": ctx.get("mhz_per_cpu"),
            "host": ctx.get("host_name"),
            "date": ctx.get("date"),
            "build": commit,
        }
        binary = ctx.get("executable", path).rsplit("/", 1)[-1]
        for b in data.get("benchmarks", []):
            if b.get("run_type") == "aggregate":
                continue
            unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
            r = {
                "binary": binary,
                "name": b["name"],
                "real_ns": round(b["real_time"] * unit, 1),
                "cpu_ns": round(b["cpu_time"] * unit, 1),
                "iterations": b["iterations"],
            }
            for k in ("items_per_second", "bytes_per_second"):
                if k in b:
                    r[k] = round(b[k], 1)
            results.append(r)
    json.dump({"benchmark": "micro", "machine": machine, "results": results}, sys.stdout,
              indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
