#!/usr/bin/env python3
"""DNS queries a second the master answers, with its scheduler idle or busy (dnsperf).

One master (`paceline master --dns-listen ... --dns-rate-limit 0`: every query comes from one
address) with emulated hosts (`paceline bench fleet`), a service `web` of 6 instances with a
named port `http` in pool /prod; dnsperf asks `web.prod.paceline A` and
`_http._tcp.web.prod.paceline SRV` (6 SRV and 6 A records in each answer).

--busy: while dnsperf runs, a churn keeps the scheduler working: service jobs of hundreds of
instances scaled up and down (`job update --instances`, so the zone changes and is republished
several times a second; a scale while the job's previous update still runs is refused and
counted), new runs of random instances of those jobs (`task restart`: each leaves DNS and comes
back), and batch jobs of hundreds of tasks submitted and killed. The report
gives the zone's SOA serial before and after each run (how many times the zone changed), and
the churn's operations.

  scripts/bench_dns_qps.py --binary build/release/paceline [--busy] [--seconds 10] [--runs 2]

Prints one line per dnsperf run and, with --json FILE, writes them there."""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from netns_bed import machine, master_endpoints

POOL = """description: bench
resources:
  cpu: {reservation: 100, limit: 3200}
  memory: {reservation: 1Ti, limit: 12Ti}
"""

WEB = """name: web
type: service
instances: 6
task:
  command: "exec sleep 3600"
  ports: [http]
  resources: {cpu: 0.1, memory: 32Mi}
"""

CHURN_SERVICE = """name: churn{k}
type: service
instances: {n}
task:
  command: "exec sleep 3600"
  ports: [http]
  resources: {{cpu: 0.1, memory: 32Mi}}
  deregistration_delay: 0s
"""

CHURN_BATCH = """name: batch{k}
instances: {n}
task:
  command: "exec sleep 3600"
  resources: {{cpu: 0.1, memory: 32Mi}}
"""


class Cluster:
    def __init__(self, binary, hosts, work):
        self.binary = os.path.abspath(binary)
        self.work = work
        self.procs = []
        data = os.path.join(work, "data")
        self.master = self.start([self.binary, "master", "--data-dir", data, "--listen",
                                  "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
                                  "--insecure-loopback", "--dns-listen", "127.0.0.1:0",
                                  "--dns-rate-limit", "0"], "master.log")
        self.addr, self.dns_port, self.token = master_endpoints(
            data, self.master, lambda: self.log("master.log"))
        self.fleet = self.start([self.binary, "--addr", self.addr, "--token", self.token,
                                 "bench", "fleet", "--hosts", str(hosts)], "fleet.log")

    def log(self, name):
        with open(os.path.join(self.work, name)) as f:
            return f.read()[-2000:]

    def start(self, argv, log):
        p = subprocess.Popen(argv, stdout=open(os.path.join(self.work, log), "w"),
                             stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def cli(self, *args, check=True):
        r = subprocess.run([self.binary, "--addr", self.addr, "--token", self.token, *args],
                           capture_output=True, text=True, timeout=120)
        if check and r.returncode != 0:
            raise SystemExit(f"paceline {' '.join(args)}: {r.stderr}")
        return r

    def create(self, pool, spec):
        path = os.path.join(self.work, f"spec-{random.getrandbits(32)}.yaml")
        with open(path, "w") as f:
            f.write(spec)
        r = self.cli("job", "create", "-f", path, "--pool", pool, "-o", "json")
        os.remove(path)
        return json.loads(r.stdout)["job_id"]

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def dig(port, name, qtype):
    r = subprocess.run(["dig", "@127.0.0.1", "-p", str(port), "+short", "+tries=1", "+time=2",
                        name, qtype], capture_output=True, text=True)
    return r.stdout.split("\n") if r.stdout.strip() else []


def soa_serial(port):
    lines = dig(port, "paceline.", "SOA")
    return int(lines[0].split()[2]) if lines else -1


class Churn:
    """Scales service jobs and submits and kills batch jobs until stopped."""

    def __init__(self, cluster, services, service_size, batch_size):
        self.c = cluster
        self.service_size = service_size
        self.batch_size = batch_size
        self.services = [cluster.create("/prod", CHURN_SERVICE.format(k=k, n=service_size))
                         for k in range(services)]
        self.ops = {"scale": 0, "scale_failed": 0, "restart": 0, "restart_failed": 0, "batch": 0,
                    "kill": 0}
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        rng = random.Random(41)
        batches = []
        k = 0
        while not self.stop_flag.is_set():
            job = rng.choice(self.services)
            n = rng.randint(self.service_size // 2, self.service_size * 3 // 2)
            r = self.c.cli("job", "update", str(job), "--instances", str(n), check=False)
            self.ops["scale" if r.returncode == 0 else "scale_failed"] += 1
            for _ in range(2):  # a new run of an instance: it leaves DNS and comes back
                i = rng.randrange(self.service_size // 2)
                r = self.c.cli("task", "restart", f"{rng.choice(self.services)}/{i}", check=False)
                self.ops["restart" if r.returncode == 0 else "restart_failed"] += 1
            if k % 3 == 0:
                batches.append(self.c.create("/prod", CHURN_BATCH.format(k=k, n=self.batch_size)))
                self.ops["batch"] += 1
                if len(batches) > 2:
                    self.c.cli("job", "kill", str(batches.pop(0)), check=False)
                    self.ops["kill"] += 1
            k += 1
            time.sleep(0.1)

    def stop(self):
        self.stop_flag.set()
        self.thread.join()


def dnsperf(port, work, name, qtype, seconds):
    path = os.path.join(work, f"q-{qtype}.txt")
    with open(path, "w") as f:
        f.write(f"{name} {qtype}\n")
    r = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", path, "-l",
                        str(seconds), "-c", "4", "-q", "500"], capture_output=True, text=True)
    out = r.stdout

    def field(pattern, cast=float):
        m = re.search(pattern, out)
        return cast(m.group(1).replace(",", "")) if m else None

    return {"qps": field(r"Queries per second:\s+([\d.]+)"),
            "sent": field(r"Queries sent:\s+(\d+)", int),
            "lost": field(r"Queries lost:\s+(\d+)", int),
            "latency_ms": (field(r"Average Latency \(s\):\s+([\d.]+)") or 0) * 1000}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default="build/release/paceline")
    ap.add_argument("--label", default="", help="a name for the binary in the report")
    ap.add_argument("--busy", action="store_true")
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--services", type=int, default=4, help="churned service jobs")
    ap.add_argument("--service-size", type=int, default=400)
    ap.add_argument("--batch-size", type=int, default=500)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    if shutil.which("dnsperf") is None or shutil.which("dig") is None:
        raise SystemExit("needs dnsperf and dig (scripts/install-deps.sh)")

    work = tempfile.mkdtemp(prefix="pl-dnsqps-")
    c = Cluster(args.binary, args.hosts, work)
    results = []
    try:
        deadline = time.time() + 120
        c.cli("pool", "create", "/prod", "-f", write(work, "pool.yaml", POOL))
        c.create("/prod", WEB)
        while len([x for x in dig(c.dns_port, "_http._tcp.web.prod.paceline.", "SRV") if x]) < 6:
            if time.time() > deadline:
                raise SystemExit("web never had 6 SRV records: " + c.cli("task", "list", "1").stdout)
            time.sleep(0.5)
        churn = None
        if args.busy:
            churn = Churn(c, args.services, args.service_size, args.batch_size)
            churn.thread.start()
            time.sleep(5)  # the churn's first jobs placed and running
        for run in range(args.runs):
            for name, qtype in (("web.prod.paceline.", "A"),
                                ("_http._tcp.web.prod.paceline.", "SRV")):
                before = soa_serial(c.dns_port)
                r = dnsperf(c.dns_port, work, name, qtype, args.seconds)
                r.update({"binary": args.label or args.binary, "busy": args.busy, "run": run + 1,
                          "qtype": qtype, "zone_changes": soa_serial(c.dns_port) - before,
                          "load": round(os.getloadavg()[0], 1)})
                if churn:
                    r["churn_ops"] = dict(churn.ops)
                results.append(r)
                print(json.dumps(r), flush=True)
        if churn:
            churn.stop()
    finally:
        c.stop()
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(with_load=True), "results": results}, f, indent=1)


def write(work, name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


if __name__ == "__main__":
    main()
