#!/usr/bin/env python3
"""How long /healthz takes while N connections that never finish their request are held open.

Usage: bench/http_stall.py PACELINE_BINARY N

Starts `paceline master` on free loopback ports in a temporary directory, opens N connections
(from 127.0.0.2-9) that send part of a request and stop, then times one /healthz from
127.0.0.1 (8 s timeout), and stops the master by PID. For the before/after of the HTTP server
(bench/results/http-abuse-*.md); the assertion itself is HttpAbuseE2E in `make test`.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request
binary = sys.argv[1]
n = int(sys.argv[2])
d = tempfile.mkdtemp()
p = subprocess.Popen([binary, "master", "--data-dir", d, "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        if os.path.exists(d + "/master.json"): break
        time.sleep(0.1)
    time.sleep(0.5)
    http = json.load(open(d + "/master.json"))["http"]
    host, port = http.split(":")
    port = int(port)
    held = []
    for i in range(n):
        s = socket.create_connection((host, port), source_address=("127.0.0.%d" % (2 + i % 8), 0))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Never-Ends: ")
        held.append(s)
    time.sleep(1)
    t0 = time.time()
    try:
        urllib.request.urlopen("http://%s/healthz" % http, timeout=8).read()
        print("%d stalled: /healthz answered in %.0f ms" % (n, (time.time() - t0) * 1000))
    except Exception as e:
        print("%d stalled: /healthz failed after %.1f s: %s" % (n, time.time() - t0, e))
finally:
    p.kill()
    p.wait()
    shutil.rmtree(d, ignore_errors=True)
