#!/usr/bin/env bash
# scripts/bench-backfill.sh — backfill side by side with Slurm: one job list (small 1-4 cpu jobs,
# node-exclusive gangs as large as half the cluster, run times and over-asked limits) through
# `paceline sim` without backfill, with backfill, and through Slurm with its backfill scheduler
# on the same cluster size, in real time; then the same figures from each run
# (scripts/backfill_metrics.py). Results: bench/results/backfill-vs-slurm-*.md.
#
# Usage:  scripts/bench-backfill.sh BUILD_DIR        (or: make bench-backfill)
#
# Environment (all optional):
#   SLURM_HARNESS  the Slurm peer harness directory (the peers directory's slurm/), e.g.
#                  SLURM_HARNESS=path/to/peers/slurm; required unless SKIP_SLURM=1
#   SKIP_SLURM     1: the two Paceline runs only (seconds; no root, no harness)
#   SEED, NODES, CPUS, WINDOW_MIN   the workload (scripts/backfill_workload.py; 1, 32, 32, 18)
#   OUT            a directory for the workload, the scenarios, the reports and the result CSVs
#                  (default: a new temporary directory, kept)
#
# The Slurm run takes as long as the workload (about 25-30 minutes): each job is submitted at
# its arrival time and really runs `sleep`. It needs root (the harness makes a network
# namespace). Slurm's SchedulerParameters (SLURM_SCHED_PARAMS) default to
#   bf_interval=5,bf_resolution=60,bf_window=60,bf_continue,bf_max_job_test=1000,
#   default_queue_depth=1000,sched_min_interval=100000
# bf_resolution=60: limits are whole minutes, so backfill plans at minute granularity (the
# harness's default of 600 would round every reservation up to 10 minutes); bf_interval=5: a
# backfill pass every 5 s instead of 30, so holes are filled about as soon as Paceline's 1 s
# cycle fills them; bf_window=60 minutes covers every reservation of this workload; the main
# scheduler runs on every submission and job end (no `defer`), as Paceline's cycle sees them.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build/release}
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
py=/usr/bin/python3
harness=${SLURM_HARNESS:-}
SKIP_SLURM=${SKIP_SLURM:-0}
SEED=${SEED:-1}
NODES=${NODES:-32}
CPUS=${CPUS:-32}
WINDOW_MIN=${WINDOW_MIN:-18}
SLURM_SCHED_PARAMS=${SLURM_SCHED_PARAMS:-bf_interval=5,bf_resolution=60,bf_window=60,bf_continue,bf_max_job_test=1000,default_queue_depth=1000,sched_min_interval=100000}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [[ $SKIP_SLURM != 1 ]]; then
  [[ -x $harness/setup.sh && -x $harness/slurm.sh && -x $harness/stop.sh ]] ||
    { echo "no Slurm peer harness in '$harness' (set SLURM_HARNESS, or SKIP_SLURM=1)" >&2; exit 1; }
  harness=$(cd "$harness" && pwd)
  [[ $(id -u) == 0 ]] || { echo "the Slurm harness needs root" >&2; exit 1; }
fi

log "workload: seed $SEED, $NODES nodes x $CPUS cpus, arrivals over $WINDOW_MIN minutes -> $out"
$py "$root/scripts/backfill_workload.py" generate --seed "$SEED" --nodes "$NODES" --cpus "$CPUS" \
  --window-min "$WINDOW_MIN" > "$out/workload.json"

runs=()
for bf in false true; do
  $py "$root/scripts/backfill_workload.py" scenario "$out/workload.json" --backfill $bf \
    > "$out/scenario-backfill-$bf.yaml"
  "$bin" sim "$out/scenario-backfill-$bf.yaml" --report "$out/sim-backfill-$bf.json" > /dev/null
  $py "$root/scripts/backfill_workload.py" sim-csv "$out/workload.json" \
    "$out/sim-backfill-$bf.json" > "$out/paceline-backfill-$bf.csv"
  label="Paceline"
  [[ $bf == true ]] && label="Paceline backfill"
  runs+=("$label=$out/paceline-backfill-$bf.csv")
  log "paceline sim, backfill $bf: done"
done

if [[ $SKIP_SLURM != 1 ]]; then
  trap '"$harness/stop.sh" >&2 || true' EXIT
  log "Slurm: $NODES nodes x $CPUS cpus, SchedulerParameters=$SLURM_SCHED_PARAMS"
  NODES=$NODES CPUS=$CPUS SCHED_PARAMS=$SLURM_SCHED_PARAMS "$harness/setup.sh" >&2
  cut -d' ' -f1-3 /proc/loadavg > "$out/load-before.txt"
  log "Slurm: submitting at the arrival times (real time, about $((WINDOW_MIN + 10)) minutes)"
  "$harness/slurm.sh" $py "$root/scripts/backfill_slurm_run.py" "$out/workload.json" \
    --out "$out/slurm.csv" --raw "$out/slurm-jobcomp.txt"
  cut -d' ' -f1-3 /proc/loadavg > "$out/load-after.txt"
  "$harness/stop.sh" >&2
  trap - EXIT
  runs+=("Slurm backfill=$out/slurm.csv")
fi

$py "$root/scripts/backfill_metrics.py" --nodes "$NODES" --cpus "$CPUS" "${runs[@]}" |
  tee "$out/table.md"
log "results in $out"
