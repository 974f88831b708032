#!/usr/bin/env bash
# A flame graph of the master under `paceline bench scale` (50,000 hosts, 1,000,000 tasks by
# default): perf (Debian's linux-perf) samples the whole process with DWARF call stacks while
# the jobs are submitted and run, and scripts/flamegraph.py draws them, one tower per thread
# role (pl-loop: the scheduler's loop; pl-store-writer: the store; pl-fleet: the emulated
# hosts; gRPC's threads). Root, or a kernel.perf_event_paranoid that allows it.
# Usage: scripts/bench-flame.sh BUILD_DIR [HOSTS] [TASKS]
# Writes bench/results/flame-scale-HOSTS-TASKS-DAY.svg (or under $BENCH_OUT) and the JSON
# report of the run beside it.
set -euo pipefail
build=${1:-build/release}
hosts=${2:-50000}
tasks=${3:-1000000}
out=${BENCH_OUT:-bench/results}
day=$(date -u +%Y-%m-%d)
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=flame-scale-$hosts-$tasks-$day
# 99 samples a second per thread: the DWARF stacks (16 KiB each) take a few tens of MB.
perf record -F 99 --call-graph dwarf,16384 -o "$tmp/perf.data" -- \
  "$bin" bench scale --hosts "$hosts" --tasks "$tasks" --no-restart --report "$out/$name.json"
perf script -i "$tmp/perf.data" -F comm,tid,ip,sym 2>/dev/null |
  python3 scripts/flamegraph.py \
    --title "paceline bench scale --hosts $hosts --tasks $tasks ($("$bin" --version | head -1))" \
    > "$out/$name.svg"
echo "wrote $out/$name.svg"
