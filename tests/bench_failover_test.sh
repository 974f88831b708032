#!/usr/bin/env bash
# scripts/bench-failover.sh at a small size: two repetitions of killing the leader of three
# masters; the report holds both times for each and the service restarted nothing (the script
# checks that itself and fails otherwise). No timing is asserted.
# Usage: tests/bench_failover_test.sh SOURCE_DIR PACELINE_BINARY
set -euo pipefail
src=$1
bin=$2
out=$(mktemp /tmp/pl-failover-report-XXXXXX.json)
trap 'rm -f "$out"' EXIT
REPS=2 TASKS=10 LEASE=2s PACELINE="$bin" OUT="$out" "$src/scripts/bench-failover.sh"
python3 - "$out" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["benchmark"] == "failover", r
assert len(r["repetitions"]) == 2, r
for rep in r["repetitions"]:
    assert 0 < rep["leader_s"] <= rep["agent_s"], rep
assert r["leader_s"]["max"] >= r["leader_s"]["median"] > 0, r
assert r["machine"]["commit"], r
print("bench-failover: report is complete:", r["leader_s"], r["agent_s"])
EOF
