#!/usr/bin/env bash
# scripts/bench-failover.sh at a small size: two repetitions of killing the leader of three
# masters, and one of killing the primary of PostgreSQL replicated by Patroni (KILL=database);
# each report holds the times of each repetition, and the script itself fails when the service
# restarted anything or an acknowledged write was lost. No timing is asserted.
# Usage: tests/bench_failover_test.sh SOURCE_DIR PACELINE_BINARY
set -euo pipefail
src=$1
bin=$2
out=$(mktemp /tmp/pl-failover-report-XXXXXX.json)
out_db=$(mktemp /tmp/pl-failover-db-report-XXXXXX.json)
trap 'rm -f "$out" "$out_db"' EXIT
REPS=2 TASKS=10 LEASE=2s PACELINE="$bin" OUT="$out" "$src/scripts/bench-failover.sh"
KILL=database REPS=1 TASKS=10 PACELINE="$bin" OUT="$out_db" "$src/scripts/bench-failover.sh"
python3 - "$out" "$out_db" <<'PY'
import json, sys
for path, killed, reps in ((sys.argv[1], "master", 2), (sys.argv[2], "database", 1)):
    r = json.load(open(path))
    assert r["benchmark"] == "failover" and r["killed"] == killed, r
    assert len(r["repetitions"]) == reps, r
    for rep in r["repetitions"]:
        assert 0 < rep["leader_s"] <= rep["agent_s"], rep
        assert rep["write_s"] > 0, rep
    assert r["leader_s"]["max"] >= r["leader_s"]["median"] > 0, r
    assert r["acknowledged_writes"] > 0 and r["lost_writes"] == 0, r
    assert r["machine"]["commit"], r
    print(f"bench-failover ({killed}): report is complete:", r["leader_s"], r["write_s"])
PY
