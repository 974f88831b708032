#!/usr/bin/env python3
"""The scaling table from `paceline bench scale` JSON reports (scripts/bench-scaling.sh).

Usage: scripts/scaling_table.py REPORT.json... > table.md
One row per report, ordered by tasks then hosts: tasks/s (overall and sustained), the CPU the
whole process spent per task (master and emulated hosts, then the master's loop and store
writer), the master's bytes per task, the scheduling cycle's p99, the restart.
"""
import json
import sys


def row(r):
    c = r["config"]
    cpu = r.get("cpu_us_per_task", {})
    cyc = r.get("cycles", {})
    rs = r["restart"]
    mem = r["memory"]
    return [
        f"{c['hosts']:,}",
        f"{c['tasks']:,}",
        f"{r['tasks_per_second']:,.0f}",
        f"{r['sustained_tasks_per_second']:,.0f}",
        f"{r['submit_to_running_ms']['p99']:,.0f}",
        f"{cpu.get('total', 0):.1f}",
        f"{cpu.get('loop', 0):.1f} / {cpu.get('writer', 0):.1f}",
        f"{mem['master_bytes_per_task']:,.0f}",
        f"≤ {cyc.get('p99_ms_at_most', 0):.1f}",
        f"{rs['serving_s']:.2f} / {rs['all_hosts_registered_s']:.1f}",
    ]


def main(paths):
    reports = [json.load(open(p)) for p in paths]
    reports.sort(key=lambda r: (r["config"]["tasks"], r["config"]["hosts"]))
    if not reports:
        sys.exit("no reports")
    m = reports[0]["machine"]
    print(f"Machine: {m['cpus']} cpus ({m['cpu_model']}), {m['memory_bytes'] / 2**30:.1f} GiB, "
          f"{m['kernel']}; commit `{m['commit']}`; {m['date']}.\n")
    head = ["hosts", "tasks", "tasks/s", "sustained", "latency p99 ms", "CPU µs/task",
            "loop / writer µs", "master B/task", "cycle p99 ms", "restart: serving / hosts s"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in reports:
        print("| " + " | ".join(row(r)) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
