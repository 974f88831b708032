#!/usr/bin/env bash
# `make up` starts the all-in-one cluster in the foreground, serves /healthz, and Ctrl-C (SIGINT
# to its process group, as a terminal sends it) stops it cleanly.
# Usage: tests/make_up_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d /tmp/pl-make-up-XXXXXX)
chmod 755 "$tmp"  # the local agent's tasks run as an unprivileged user
log=$tmp/make-up.log
pid=""
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

setsid make -C "$src" up \
  UP_ARGS="--data-dir $tmp/data --listen 127.0.0.1:0 --http-listen 127.0.0.1:0" >"$log" 2>&1 &
pid=$!

for _ in $(seq 1 600); do
  [[ -f $tmp/data/master.json ]] && break
  kill -0 "$pid" 2>/dev/null || { echo "make up exited early:"; cat "$log"; exit 1; }
  sleep 0.5
done
[[ -f $tmp/data/master.json ]] || { echo "make up did not start a master:"; cat "$log"; exit 1; }

http=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$tmp/data/master.json")
# The HTTP side serves HTTPS with the cluster's CA (made under data/tls); plain HTTP is refused.
body=$(curl -sf --cacert "$tmp/data/tls/ca.pem" "https://$http/healthz")
if curl -sf --max-time 5 "http://$http/healthz" >/dev/null 2>&1; then
  echo "plain HTTP answered on a TLS master"; exit 1
fi
echo "healthz: $body"
[[ $body == *'"status":"ok"'* ]] || { echo "unexpected /healthz body"; exit 1; }

kill -INT -- "-$pid"
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then echo "make up did not stop on Ctrl-C"; cat "$log"; exit 1; fi
wait "$pid" || true
grep -q "^stopped$" "$log" || { echo "no clean stop in the log:"; cat "$log"; exit 1; }
[[ ! -f $tmp/data/master.json ]] || { echo "master.json left behind"; exit 1; }
echo "make up: served /healthz and stopped cleanly"
