#!/usr/bin/env bash
# Runs every Google Benchmark binary of a build (short runs) and prints their tables.
# Usage: scripts/bench.sh BUILD_DIR
set -euo pipefail
build=${1:-build/release}
list="$build/benchmarks.txt"
[[ -f $list ]] || { echo "no $list: build first (make build)"; exit 1; }
while IFS= read -r bin; do
  [[ -n $bin ]] || continue
  echo "== $(basename "$bin")"
  "$bin" --benchmark_min_time=0.1 ${BENCH_FILTER:+--benchmark_filter=$BENCH_FILTER}
done < "$list"
