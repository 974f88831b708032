#!/usr/bin/env bash
# The scaling table of `paceline bench scale`: tasks/s, CPU and memory per task and the
# scheduling cycle's p99 as the cluster (hosts) and the work (tasks) grow, so that the growth
# of the per-task cost is visible. One JSON report per cell, then a Markdown table of them all.
# Usage: scripts/bench-scaling.sh BUILD_DIR [HOSTS_LIST] [TASKS_LIST]
#   defaults: hosts 10000 50000 100000, tasks 100000 1000000 (make bench-scaling);
#   SCALING_TASKS="100000 1000000 10000000" adds the 10,000,000-task row (about 15 minutes and
#   12 GiB of memory per cell on 2 cores).
# Writes bench/results/scaling-DAY/ (or $BENCH_OUT/scaling-DAY/) and scaling-DAY.md beside it.
set -euo pipefail
build=${1:-build/release}
hosts_list=${2:-${SCALING_HOSTS:-10000 50000 100000}}
tasks_list=${3:-${SCALING_TASKS:-100000 1000000}}
out=${BENCH_OUT:-bench/results}
day=$(date -u +%Y-%m-%d)
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
dir=$out/scaling-$day
mkdir -p "$dir"
for tasks in $tasks_list; do
  for hosts in $hosts_list; do
    echo "== $hosts hosts, $tasks tasks"
    # 32 cpus a host: 100,000 tasks of 1 cpu need 3,125 hosts, 10,000,000 need 312,500: the
    # hosts get as many cpus as the tasks need, at least 32.
    cpus=$(( (tasks + hosts - 1) / hosts ))
    (( cpus < 32 )) && cpus=32
    "$bin" bench scale --hosts "$hosts" --host-cpus "$cpus" --tasks "$tasks" \
      --report "$dir/scale-$hosts-hosts-$tasks-tasks.json"
  done
done
python3 scripts/scaling_table.py "$dir"/*.json > "$out/scaling-$day.md"
echo "wrote $out/scaling-$day.md"
