#!/usr/bin/env python3
"""A tiny HTTP service for Paceline's service examples (examples/service/web.yaml).

GET /       200 "version=<VERSION> instance=<PACELINE_INSTANCE_ID>": which version served it
GET /ready  200 once warmed up, 503 before (WARMUP_SECONDS) and once stopping (SIGTERM)

It listens on $PACELINE_PORT_HTTP on every IPv4 address of its host. During its warm-up it answers
503 everywhere, as a server that still loads its data would: a client only ever sees it once
its readiness check has passed. On SIGTERM it stops accepting, finishes the requests it has,
and exits 0. HTTP/1.0: one connection per request, so a proxy keeps no idle connection to it.
"""

import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = os.environ.get("VERSION", "v1")
INSTANCE = os.environ.get("PACELINE_INSTANCE_ID", "?")
PORT = int(os.environ["PACELINE_PORT_HTTP"])
WARM_AT = time.monotonic() + float(os.environ.get("WARMUP_SECONDS", "1"))
stopping = threading.Event()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        warm = time.monotonic() >= WARM_AT
        if self.path == "/ready":
            ok = warm and not stopping.is_set()
            self.reply(200 if ok else 503, "ready\n" if ok else "not ready\n")
        elif not warm:
            self.reply(503, "warming up\n")
        else:
            self.reply(200, f"version={VERSION} instance={INSTANCE}\n")

    def reply(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # no line per request
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() waits for the requests in flight
    request_queue_size = 128


def main():
    server = Server(("0.0.0.0", PORT), Handler)

    def stop(signum, frame):
        stopping.set()
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"web {VERSION} instance {INSTANCE} on port {PORT}", flush=True)
    server.serve_forever(poll_interval=0.1)
    server.server_close()
    print(f"web {VERSION} instance {INSTANCE} stopped", flush=True)


if __name__ == "__main__":
    main()
