#!/usr/bin/env python3
"""The round trip of `paceline task exec` (bench/results/exec-round-trip-*.md).

Figures against a running task JOB/INSTANCE of a live cluster, each over N runs:
  api     the exec round trip: one `Client.exec(task, ["true"])` of the Python client on an
          established connection (one channel, connected and warmed up before the runs), from
          the request to the exit code: the master's checks and read, the agent's spawn of the
          command in the task's cgroup and sandbox, its exit, the stream's end;
  echo    one line written to a live `paceline task exec -i JOB/INSTANCE -- cat` and read back
          (CLI -> master -> agent -> cat -> agent -> master -> CLI), N lines in one session;
  whole   `paceline task exec JOB/INSTANCE -- true`, from the CLI's start to its exit (all of
          the above plus the process's start and its connection, with TLS its handshake);
  start   `paceline --version`, the CLI process's start and exit alone (what `whole` pays
          before it connects).

Usage: bench_exec.py PACELINE ADDR TOKEN JOB/INSTANCE [--runs N] [--ca CA]
                     [--figures api,echo,whole,start] [--label TEXT]
The api figure imports the Python client (clients/python, installed or on PYTHONPATH).
Prints one JSON object: p50, p90, p99 and max of each, in milliseconds, and the load average.
"""

import argparse
import json
import os
import statistics
import subprocess
import time


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def summary(ms):
    return {"p50_ms": round(statistics.median(ms), 2), "p90_ms": round(pct(ms, 0.9), 2),
            "p99_ms": round(pct(ms, 0.99), 2), "max_ms": round(max(ms), 2), "runs": len(ms)}


def bench_api(a):
    from paceline import Client  # the Python client (clients/python)
    client = Client(a.addr, token=a.token, ca=a.ca or None)
    job, instance = a.task.split("/")
    task = (int(job), int(instance))
    for _ in range(3):  # connects, and warms the channel and the master's path
        r = client.exec(task, ["true"])
        if r.exit_code != 0:
            raise SystemExit(f"exec true: exit {r.exit_code}: {r.stderr!r}")
    ms = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        r = client.exec(task, ["true"])
        ms.append((time.perf_counter() - t0) * 1000)
        if r.exit_code != 0:
            raise SystemExit(f"exec true: exit {r.exit_code}: {r.stderr!r}")
    return ms


def bench_whole(a, base):
    ms = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        r = subprocess.run(base + ["task", "exec", a.task, "--", "true"], capture_output=True)
        ms.append((time.perf_counter() - t0) * 1000)
        if r.returncode != 0:
            raise SystemExit(f"task exec failed: {r.stderr.decode()}")
    return ms


def bench_start(a):
    ms = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        subprocess.run([a.paceline, "--version"], capture_output=True, check=True)
        ms.append((time.perf_counter() - t0) * 1000)
    return ms


def bench_echo(a, base):
    p = subprocess.Popen(base + ["task", "exec", "-i", a.task, "--", "cat"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ms = []
    for i in range(a.runs + 1):
        line = f"ping {i}\n".encode()
        t0 = time.perf_counter()
        p.stdin.write(line)
        p.stdin.flush()
        got = p.stdout.readline()
        if got != line:
            raise SystemExit(f"echo: sent {line!r}, got {got!r}")
        if i > 0:  # the first line also waits for the session to start
            ms.append((time.perf_counter() - t0) * 1000)
    p.stdin.close()
    if p.wait(timeout=30) != 0:
        raise SystemExit("cat did not exit 0")
    return ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paceline")
    ap.add_argument("addr")
    ap.add_argument("token")
    ap.add_argument("task")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--ca", default="")
    ap.add_argument("--figures", default="api,echo,whole,start")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    base = [a.paceline, "--addr", a.addr, "--token", a.token]
    if a.ca:
        base += ["--ca", a.ca]

    out = {"label": a.label, "load_before": os.getloadavg()[0]}
    for figure in a.figures.split(","):
        if figure == "api":
            out["api"] = summary(bench_api(a))
        elif figure == "echo":
            out["echo"] = summary(bench_echo(a, base))
        elif figure == "whole":
            out["whole"] = summary(bench_whole(a, base))
        elif figure == "start":
            out["start"] = summary(bench_start(a))
        else:
            raise SystemExit(f"--figures: unknown figure {figure!r} (api, echo, whole, start)")
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
