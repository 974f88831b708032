#!/usr/bin/env bash
# scripts/bench-reads.sh at a small size (5 jobs, 2 s runs, one round): reads over HTTPS with a
# viewer's token reach the leader and every standby, none is refused, and the report is
# complete. No throughput is asserted.
# Usage: tests/bench_reads_test.sh SOURCE_DIR PACELINE_BINARY
set -euo pipefail
src=$1
bin=$2
out=$(mktemp /tmp/pl-reads-report-XXXXXX.json)
trap 'rm -f "$out"' EXIT
ROUNDS=1 DURATION=2s JOBS=5 TASKS=4 CONNS=12 PACELINE="$bin" REPORT="$out" \
  "$src/scripts/bench-reads.sh" >/dev/null
python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["masters"] == 3 and r["jobs"] == 5, r
assert len(r["one_master_rps"]) == 1 and r["one_master_rps"][0] > 0, r
assert len(r["all_masters_rps"]) == 1 and r["all_masters_rps"][0] > 0, r
assert r["non_2xx"] == 0, r
print("bench-reads: report is complete:", r["one_master_rps"], r["all_masters_rps"])
PY
