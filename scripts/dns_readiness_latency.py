#!/usr/bin/python3
"""Time from an instance becoming ready or unready to the master's DNS answer changing.

Starts `paceline up --dns-listen` (a real master and agent), a service `web` of 2 instances
whose check (`--check readiness`, or `health`) is a command on a file, probed every
--interval with failures 1: instance 0 passes while FLAGS/down-0 does not exist. Then --flips
times: waits a random 0.3 to 0.8 s (so that the flips fall anywhere in the probe interval and in
the master's republish period), creates or removes the file, and asks the master's DNS for
`0.web.bench.paceline A` over UDP every 2 ms until the answer has changed (an address, or none).

The latency is split with the master's task events (`task events`: the time the master handled
the agent's READY/NOT_READY or HEALTHY/UNHEALTHY report, in milliseconds):
  - check: file changed -> the master has the report (the agent's probe interval, the probe's
    own time, the agent's report to the master);
  - publish: the master has it -> the DNS answer changed (the master's zone pass, every 250 ms,
    and the swap into the DNS server).

  /usr/bin/python3 scripts/dns_readiness_latency.py --binary build/release/paceline \\
      [--flips 40] [--interval 100ms] [--check readiness] [--json FILE]

Needs python3-dnspython (scripts/install-deps.sh)."""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time

import dns.message
import dns.query
import dns.rdatatype

from netns_bed import machine, master_endpoints, percentile

POOL = """description: bench
resources:
  cpu: {reservation: 1, limit: 2}
  memory: {reservation: 1Gi}
"""

WEB = """name: web
type: service
instances: 2
task:
  command: "exec sleep 3600"
  ports: [http]
  resources: {{cpu: 0.1, memory: 32Mi}}
  {check}: {{command: "test ! -e {flags}/down-$PACELINE_INSTANCE_ID", interval: {interval}, \
timeout: 5s, failures: 1}}
"""

NAME = "0.web.bench.paceline."


def has_address(port):
    """Whether the instance's name answers an address now; None when no answer came."""
    q = dns.message.make_query(NAME, dns.rdatatype.A)
    try:
        r = dns.query.udp(q, "127.0.0.1", port=port, timeout=1)
    except Exception:  # a timeout or a malformed answer: counted by the caller
        return None
    return any(rrset.rdtype == dns.rdatatype.A for rrset in r.answer)


class Up:
    def __init__(self, binary, work):
        self.binary = os.path.abspath(binary)
        data = os.path.join(work, "data")
        self.log_path = os.path.join(work, "up.log")
        self.proc = subprocess.Popen(
            [self.binary, "up", "--data-dir", data, "--listen", "127.0.0.1:0", "--http-listen",
             "127.0.0.1:0", "--insecure-loopback", "--dns-listen", "127.0.0.1:0"],
            stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT, cwd=work)
        self.addr, self.dns_port, self.token = master_endpoints(data, self.proc, self.log)

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-3000:]

    def cli(self, *args):
        r = subprocess.run([self.binary, "--addr", self.addr, "--token", self.token, *args],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise SystemExit(f"paceline {' '.join(args)}: {r.stderr}")
        return r.stdout

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def task_events(up, job):
    """(unix ms, reason) of instance 0's events, oldest first."""
    out = json.loads(up.cli("task", "events", f"{job}/0", "-o", "json"))
    events = out.get("events", out) if isinstance(out, dict) else out
    rows = []
    for e in events:
        ms = e.get("at_unix_ms") or e.get("atUnixMs")
        rows.append((int(ms), e.get("reason", "")))
    return sorted(rows)


def summary(values):
    if not values:
        return {}
    return {"n": len(values), "p50": percentile(values, 50), "p99": percentile(values, 99),
            "max": max(values)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default="build/release/paceline")
    ap.add_argument("--flips", type=int, default=40)
    ap.add_argument("--interval", default="100ms", help="the check's interval")
    ap.add_argument("--check", default="readiness", choices=["readiness", "health"])
    ap.add_argument("--json")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="pl-dnsready-")
    os.chmod(work, 0o755)
    flags = os.path.join(work, "flags")
    os.mkdir(flags)
    os.chmod(flags, 0o777)  # the check runs as the task's user
    down = os.path.join(flags, "down-0")
    up = Up(args.binary, work)
    flips, unanswered = [], 0
    try:
        pool = os.path.join(work, "pool.yaml")
        with open(pool, "w") as f:
            f.write(POOL)
        up.cli("pool", "create", "/bench", "-f", pool)
        spec = os.path.join(work, "web.yaml")
        with open(spec, "w") as f:
            f.write(WEB.format(check=args.check, flags=flags, interval=args.interval))
        job = json.loads(up.cli("job", "create", "-f", spec, "--pool", "/bench", "-o",
                                "json"))["job_id"]
        deadline = time.time() + 120
        while has_address(up.dns_port) is not True:
            if time.time() > deadline:
                raise SystemExit("instance 0 never was in DNS: " + up.log())
            time.sleep(0.05)

        rng = random.Random(41)
        ready = True
        for i in range(args.flips):
            time.sleep(rng.uniform(0.3, 0.8))
            want = not ready
            t0 = time.time()
            if want:
                os.remove(down)
            else:
                open(down, "w").close()
            seen = None
            while time.time() - t0 < 10:
                got = has_address(up.dns_port)
                if got is None:
                    unanswered += 1
                elif got == want:
                    seen = time.time()
                    break
                time.sleep(0.002)
            flips.append({"to": "ready" if want else "unready", "flip": t0, "dns": seen})
            ready = want
            print(f"flip {i + 1}: {'ready' if want else 'unready'} "
                  f"{'missed' if seen is None else f'{(seen - t0) * 1000:.0f} ms'}", flush=True)

        events = task_events(up, job)
        good = {True: ("READY", "HEALTHY"), False: ("NOT_READY", "UNHEALTHY")}
        for f in flips:
            f0 = int(f["flip"] * 1000)
            wanted = good[f["to"] == "ready"]
            match = [ms for ms, reason in events if reason in wanted and ms >= f0 - 1]
            f["master"] = match[0] / 1000 if match else None
    finally:
        up.stop()
        shutil.rmtree(work, ignore_errors=True)

    def ms(a, b):
        return round((b - a) * 1000, 1)

    done = [f for f in flips if f["dns"] is not None]
    report = {"machine": machine(with_load=True), "check": args.check,
              "interval": args.interval, "flips": len(flips), "missed": len(flips) - len(done),
              "unanswered_queries": unanswered}
    for label, subset in (("all", done), ("to_ready", [f for f in done if f["to"] == "ready"]),
                          ("to_unready", [f for f in done if f["to"] == "unready"])):
        report[label] = {
            "total_ms": summary([ms(f["flip"], f["dns"]) for f in subset]),
            "check_ms": summary([ms(f["flip"], f["master"]) for f in subset if f["master"]]),
            "publish_ms": summary([ms(f["master"], f["dns"]) for f in subset if f["master"]]),
        }
    print(json.dumps(report, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"report": report, "flips": flips}, f, indent=1)


if __name__ == "__main__":
    main()
