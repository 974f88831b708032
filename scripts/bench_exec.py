#!/usr/bin/env python3
"""The round trip of `paceline task exec` (bench/results/exec-round-trip-*.md).

Two figures against a running task JOB/INSTANCE of a live cluster:
  whole   `paceline task exec JOB/INSTANCE -- true`, from the CLI's start to its exit (process
          start, connection, the master's checks and read, the agent's spawn of the command in
          the task's cgroup and sandbox, its exit, the stream's end), N runs;
  echo    one line written to a live `paceline task exec -i JOB/INSTANCE -- cat` and read back
          (CLI -> master -> agent -> cat -> agent -> master -> CLI), N lines in one session.

Usage: bench_exec.py PACELINE ADDR TOKEN JOB/INSTANCE [--runs N] [--ca CA]
Prints one JSON object: p50, p90 and max of each, in milliseconds.
"""

import argparse
import json
import statistics
import subprocess
import time


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def summary(ms):
    return {"p50_ms": round(statistics.median(ms), 2), "p90_ms": round(pct(ms, 0.9), 2),
            "max_ms": round(max(ms), 2), "runs": len(ms)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paceline")
    ap.add_argument("addr")
    ap.add_argument("token")
    ap.add_argument("task")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--ca", default="")
    a = ap.parse_args()
    base = [a.paceline, "--addr", a.addr, "--token", a.token]
    if a.ca:
        base += ["--ca", a.ca]

    whole = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        r = subprocess.run(base + ["task", "exec", a.task, "--", "true"], capture_output=True)
        whole.append((time.perf_counter() - t0) * 1000)
        if r.returncode != 0:
            raise SystemExit(f"task exec failed: {r.stderr.decode()}")

    p = subprocess.Popen(base + ["task", "exec", "-i", a.task, "--", "cat"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    echo = []
    for i in range(a.runs + 1):
        line = f"ping {i}\n".encode()
        t0 = time.perf_counter()
        p.stdin.write(line)
        p.stdin.flush()
        got = p.stdout.readline()
        if got != line:
            raise SystemExit(f"echo: sent {line!r}, got {got!r}")
        if i > 0:  # the first line also waits for the session to start
            echo.append((time.perf_counter() - t0) * 1000)
    p.stdin.close()
    if p.wait(timeout=30) != 0:
        raise SystemExit("cat did not exit 0")
    print(json.dumps({"whole": summary(whole), "echo": summary(echo)}))


if __name__ == "__main__":
    main()
