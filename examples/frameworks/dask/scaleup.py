"""How long a Dask worker takes to come up on Paceline: from the driver's scale-up request (the
UpdateJob of its own job) to the worker's registration with the scheduler. Runs as the driver
of examples/frameworks/dask/job.yaml instead of driver.py; scales to one worker and back to
none RUNS times (default 10) and prints each latency, their median and their 99th percentile
(nearest rank: with 10 runs, the slowest).

    python3 scaleup.py [RUNS]
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from typing import Callable

from paceline.dask import PacelineCluster


def wait_until(cond: Callable[[], bool], timeout: float) -> None:
    until = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > until:
            raise TimeoutError(f"not within {timeout:g}s")
        time.sleep(0.005)


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with PacelineCluster() as cluster:
        print(f"scheduler at {cluster.scheduler_address}", flush=True)
        for i in range(runs):
            cluster.scale(1)
            wait_until(lambda: len(cluster.startup_latencies) > i, 120)
            for address in list(cluster.scheduler_info["workers"]):
                print(f"run {i + 1}: worker at {address}", flush=True)
            cluster.scale(0)
            wait_until(lambda: not cluster.observed, 60)
            time.sleep(0.5)  # the instance's removal settles
        latencies = [s for _, s in cluster.startup_latencies]
    for i, s in enumerate(latencies):
        print(f"run {i + 1}: worker registered {s:.3f}s after the scale-up request", flush=True)
    p99 = sorted(latencies)[max(0, math.ceil(0.99 * len(latencies)) - 1)]
    print(f"scale-up to registered: p50 {statistics.median(latencies):.3f}s p99 {p99:.3f}s "
          f"min {min(latencies):.3f}s max {max(latencies):.3f}s over {len(latencies)} runs",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
