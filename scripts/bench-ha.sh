#!/usr/bin/env bash
# The PostgreSQL benchmarks (make bench-ha; docs/benchmarks.md), on a PostgreSQL started in a
# temporary directory and stopped by PID at the end:
#   1. `paceline bench scale --store postgres://...`: one master on PostgreSQL, HOSTS emulated
#      hosts (5,000), TASKS tasks (200,000) -> bench/results/scale-postgres-DATE.json;
#   2. scripts/bench-failover.sh: REPS (10) kills of the leader among three masters ->
#      bench/results/failover-DATE.json;
#   3. the same with KILL=database: REPS kills of the PostgreSQL primary under Patroni ->
#      bench/results/failover-db-DATE.json;
#   4. scripts/bench-takeover.sh: a standby's takeover of TAKEOVER_TASKS (1,000,000) tasks ->
#      bench/results/takeover-DATE.json;
#   5. scripts/bench-reads.sh: authenticated reads of one master against three ->
#      bench/results/standby-reads-DATE.json.
# Usage: scripts/bench-ha.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
out=${BENCH_OUT:-bench/results}
day=$(date -u +%Y-%m-%d)
mkdir -p "$out"
source scripts/pg-lib.sh
tmp=$(mktemp -d /tmp/pl-bench-ha-XXXXXX)
chmod 755 "$tmp"
trap 'pg_stop; rm -rf "$tmp"' EXIT

echo "== scale on PostgreSQL: ${HOSTS:-5000} hosts, ${TASKS:-200000} tasks"
pg_start "$tmp/pg"
pg_createdb bench
"$bin" bench scale --store "${PG_URL}bench" --hosts "${HOSTS:-5000}" --host-cpus 64 \
  --tasks "${TASKS:-200000}" \
  --report "$out/scale-postgres-$day.json"
# The database's size, into the report: store.bytes and per task.
db_bytes=$("$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U paceline -d bench -tAc \
  "SELECT pg_database_size('bench')")
python3 - "$out/scale-postgres-$day.json" "$db_bytes" <<'EOF'
import json, sys
path, size = sys.argv[1], int(sys.argv[2])
r = json.load(open(path))
r["store"]["bytes"] = size
r["store"]["bytes_per_task"] = round(size / max(1, r["config"]["tasks"]))
json.dump(r, open(path, "w"), indent=2)
print(f"PostgreSQL database: {size / 2**20:.0f} MiB, {r['store']['bytes_per_task']} bytes per task")
EOF
pg_stop

echo "== failover: ${REPS:-10} kills of the leader"
PACELINE=$bin OUT="$out/failover-$day.json" scripts/bench-failover.sh

echo "== database failover: ${REPS:-10} kills of the PostgreSQL primary under Patroni"
PACELINE=$bin KILL=database OUT="$out/failover-db-$day.json" scripts/bench-failover.sh

echo "== a standby's takeover at ${TAKEOVER_TASKS:-1000000} tasks"
PACELINE=$bin TASKS=${TAKEOVER_TASKS:-1000000} OUT="$out/takeover-$day.json" scripts/bench-takeover.sh

echo "== reads: one master against three"
PACELINE=$bin REPORT="$out/standby-reads-$day.json" scripts/bench-reads.sh
