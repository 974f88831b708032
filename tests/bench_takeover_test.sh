#!/usr/bin/env bash
# scripts/bench-takeover.sh at a small size (200 emulated hosts, 5,000 tasks): a lone master's
# start and a standby's takeover on PostgreSQL are measured and the report is complete. No
# timing is asserted.
# Usage: tests/bench_takeover_test.sh SOURCE_DIR PACELINE_BINARY
set -euo pipefail
src=$1
bin=$2
out=$(mktemp /tmp/pl-takeover-report-XXXXXX.json)
trap 'rm -f "$out"' EXIT
HOSTS=200 TASKS=5000 PACELINE="$bin" OUT="$out" "$src/scripts/bench-takeover.sh"
python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["benchmark"] == "takeover" and r["tasks"] == 5000, r
assert r["running_tasks"] == 5000, r
assert r["cold_s"] > 0 and r["takeover_s"] > 0, r
assert r["takeover_log"].startswith("took over from the followed state in"), r
assert r["machine"]["commit"], r
print("bench-takeover: report is complete:", r["cold_s"], r["takeover_s"], r["takeover_log"])
PY
