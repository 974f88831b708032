#!/usr/bin/env bash
# A standby's takeover of a large cluster on PostgreSQL (docs/benchmarks.md), on real processes:
#   1. PostgreSQL in a temporary directory (127.0.0.1, stopped by PID at the end);
#   2. `paceline bench scale --store postgres://...` fills it: HOSTS emulated hosts (5,000),
#      TASKS tasks (1,000,000), every one RUNNING when the benchmark's master stops;
#   3. master A starts on that database and leads: `cold_s`, from its start until it answers
#      as leader (it reads the whole store);
#   4. master B starts beside it as a standby and follows the store;
#   5. A is killed with SIGKILL: `takeover_s`, until B answers as leader under the next term
#      (the lease runs out, then B reads only the changes since its copy), and B's own log line
#      "took over from the followed state in ...".
# The hosts of step 2 are emulated and gone, so no agent registers again: what is measured is
# the master until it serves. Writes a JSON report to OUT (default
# bench/results/takeover-DATE.json). Knobs: HOSTS, TASKS, LEASE (the default), PACELINE.
set -euo pipefail
cd "$(dirname "$0")/.."
PACELINE=$(realpath "${PACELINE:-build/release/paceline}")
HOSTS=${HOSTS:-5000}
TASKS=${TASKS:-1000000}
OUT=${OUT:-bench/results/takeover-$(date -u +%Y-%m-%d).json}
[[ -x $PACELINE ]] || { echo "no $PACELINE: run 'make build' first" >&2; exit 1; }
source scripts/pg-lib.sh
tmp=$(mktemp -d /tmp/pl-takeover-XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; done
  pg_stop
  rm -rf "$tmp"
}
trap cleanup EXIT

pg_start "$tmp/pg"
pg_createdb bench
store="${PG_URL}bench"
"$PACELINE" bench scale --store "$store" --hosts "$HOSTS" --host-cpus 256 --tasks "$TASKS" \
  --report "$tmp/scale.json" >"$tmp/scale.log" 2>&1 ||
  { tail -20 "$tmp/scale.log" >&2; exit 1; }
running=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["restart"]["running_after"])' \
  "$tmp/scale.json" 2>/dev/null || echo "?")

now() { date +%s.%N; }
# Starts master $1 (its data dir and log under $tmp); sets addr_$1 to its gRPC address.
start_master() {
  local port
  port=$(pg_free_port)
  "$PACELINE" master --store "$store" --data-dir "$tmp/m$1" --listen "127.0.0.1:$port" \
    --http-listen 127.0.0.1:0 --insecure-loopback --token-file "$tmp/token" \
    --agent-token-file "$tmp/agent-token" ${LEASE:+--lease "$LEASE"} >"$tmp/m$1.log" 2>&1 &
  pids+=($!)
  disown "$!"  # killed on purpose: no job-control message
  printf -v "addr_$1" '%s' "127.0.0.1:$port"
}
# The master at $1's role and term as "ROLE TERM LAG_MS", or nothing while it does not answer.
info() {
  "$PACELINE" --addr "$1" --token "$(cat "$tmp/token" 2>/dev/null)" --timeout 2s info -o json \
    2>/dev/null | python3 -c 'import json,sys; m=json.load(sys.stdin)
print(m.get("role"), m.get("term", 0), m.get("replication_lag_ms", -1))' 2>/dev/null || true
}
# Waits (at most 300 s) until `info $1` starts with $2.
wait_role() {
  for _ in $(seq 6000); do
    [[ $(info "$1") == "$2"* ]] && return 0
    sleep 0.05
  done
  echo "master at $1 never became $2: $(tail -5 "$tmp"/m*.log)" >&2
  exit 1
}

t0=$(now)
start_master a
wait_role "$addr_a" leader
cold=$(python3 -c "print($(now) - $t0)")
read -r _ term _ < <(info "$addr_a")
start_master b
for _ in $(seq 6000); do
  read -r role _ lag < <(info "$addr_b") || true
  [[ ${role:-} == standby && ${lag:--1} -ge 0 ]] && break
  sleep 0.05
done
kill -KILL "${pids[0]}"
t0=$(now)
wait_role "$addr_b" "leader $((term + 1))"
takeover=$(python3 -c "print($(now) - $t0)")
line=$(grep -o "took over from the followed state in [^:]*" "$tmp/mb.log" | head -1)

mkdir -p "$(dirname "$OUT")"
python3 - "$OUT" "$HOSTS" "$TASKS" "$running" "$cold" "$takeover" "$line" \
  "$("$PACELINE" --version | head -1)" <<'EOF'
import datetime, json, os, platform, subprocess, sys
out, hosts, tasks, running, cold, takeover, line, version = sys.argv[1:]
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
report = {
    "benchmark": "takeover", "store": "postgres", "hosts": int(hosts), "tasks": int(tasks),
    "running_tasks": int(running) if running.isdigit() else None, "cold_s": round(float(cold), 3),
    "takeover_s": round(float(takeover), 3), "takeover_log": line,
    "machine": {"cpus": os.cpu_count(), "model": model, "kernel": platform.release(),
                "version": version, "commit": commit,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")},
}
json.dump(report, open(out, "w"), indent=2)
print(f"{tasks} tasks on PostgreSQL: a lone master serves {float(cold):.2f} s after its start; "
      f"a standby serves {float(takeover):.2f} s after the leader's kill ({line}) -> {out}")
EOF
