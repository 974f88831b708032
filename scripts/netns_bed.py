"""The multi-host test bed (scripts/netns-cluster.sh) for benchmark scripts: start a bed of N
hosts, run the CLI against it, take it down; the nearest-rank percentile they report, the
machine they ran on, and where a master they started listens."""

import json
import math
import os
import platform
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETNS = os.path.join(REPO, "scripts", "netns-cluster.sh")


def master_endpoints(data_dir, proc, log, timeout=60):
    """Waits for the master of `data_dir` (started as `proc`) to write its master.json; returns
    (API address, DNS port, token). Exits with `log()` when it stops or takes past `timeout`."""
    path = os.path.join(data_dir, "master.json")
    deadline = time.time() + timeout
    while not os.path.exists(path):
        if time.time() > deadline or proc.poll() is not None:
            raise SystemExit("the master did not start: " + log())
        time.sleep(0.1)
    time.sleep(0.2)  # written, then renamed into place: give the reader a whole file
    with open(path) as f:
        j = json.load(f)
    with open(os.path.join(data_dir, "token")) as f:
        token = f.read().strip()
    return j["grpc"] if "grpc" in j else j["addr"], int(j["dns"].rsplit(":", 1)[1]), token


def percentile(values, p):
    """Nearest-rank percentile of a non-empty list."""
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def machine(with_load=False):
    """The machine in a line: cores, CPU model, memory, kernel (and the load average now)."""
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    text = (f"`nproc` = {os.cpu_count()}, {model}, {mem_kib / 2**20:.0f} GiB RAM, "
            f"Linux {platform.release()}")
    if with_load:
        text += f"; load average at the start {os.getloadavg()[0]:.1f}"
    return text


class Bed:
    """A bed of `hosts` agents, each with `cpu` and `memory`, its state under `data`."""

    def __init__(self, binary, hosts, data, cpu="2", memory="4Gi"):
        self.env = dict(os.environ, PACELINE=binary)
        out = subprocess.run([NETNS, "up", str(hosts), "--dir", data, "--cpu", cpu,
                              "--memory", memory], env=self.env, check=True,
                             capture_output=True, text=True).stdout
        self.run = out.split()[1].rstrip(":")  # "run pln3: 4 hosts connected in 812 ms"
        self.up_line = out.splitlines()[0]

    def cli(self, *args):
        r = subprocess.run([NETNS, "--run", self.run, "cli", *args], env=self.env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"paceline {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def down(self):
        subprocess.run([NETNS, "--run", self.run, "down"], env=self.env, capture_output=True)
