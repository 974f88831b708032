#!/usr/bin/env bash
# The master alone over real gRPC agent streams: `paceline master` in a process of its own,
# HOSTS emulated hosts in FLEETS `paceline bench fleet` processes (each host on its own agent
# stream), TASKS tasks of 1 cpu submitted with the CLI as jobs of 5,000 (8 at a time). Reports
# the time from the first submission until every task is RUNNING (polled with `job list`), and
# the CPU each process spent meanwhile, from /proc/PID/stat: the master's per task is the figure
# the in-process benchmark cannot separate from the emulated hosts'.
# Every process is started here on 127.0.0.1 and stopped by its PID at the end.
# Usage: scripts/bench-grpc-split.sh BUILD_DIR [HOSTS] [TASKS] [FLEETS]
#   (defaults 5000 100000 2); writes bench/results/grpc-split-HOSTS-TASKS-DAY.json (or $BENCH_OUT)
set -euo pipefail
build=${1:-build/release}
hosts=${2:-5000}
tasks=${3:-100000}
fleets=${4:-2}
bin=$(realpath "$build/paceline")
out=$(realpath -m "${BENCH_OUT:-bench/results}")
day=$(date -u +%Y-%m-%d)
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
(( tasks % 5000 == 0 )) || { echo "TASKS: expected a multiple of 5000" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d /tmp/pl-grpc-split-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"  # no ./data/tls here: the CLI talks plain text to the loopback master

"$bin" master --data-dir m --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --insecure-loopback \
  --heartbeat-interval 10s --host-timeout 60s > master.log 2>&1 &
master=$!
pids+=("$master")
for _ in $(seq 1 200); do [[ -f m/master.json ]] && break; sleep 0.1; done
[[ -f m/master.json ]] || { echo "the master did not start:"; cat master.log; exit 1; }
addr=$(python3 -c 'import json; print(json.load(open("m/master.json"))["grpc"])')
pl() { "$bin" --addr "$addr" --token "$(cat m/token)" "$@"; }

per=$(( (hosts + fleets - 1) / fleets ))
for f in $(seq 0 $((fleets - 1))); do
  n=$(( f == fleets - 1 ? hosts - per * (fleets - 1) : per ))
  "$bin" --addr "$addr" --token "$(cat m/token)" bench fleet --hosts "$n" --cpu 64 \
    --prefix "fleet$f" > "fleet$f.log" 2>&1 &
  pids+=("$!")
done
for _ in $(seq 1 600); do
  up=$(pl host list -o json | python3 -c 'import json,sys; print(sum(1 for h in json.load(sys.stdin)["hosts"] if h.get("connected")))')
  (( up >= hosts )) && break
  sleep 0.5
done
(( up >= hosts )) || { echo "only $up of $hosts hosts connected"; exit 1; }
printf 'resources:\n  cpu: {reservation: 0, limit: 100000000}\n' > pool.yaml
pl pool create /bench -f pool.yaml > /dev/null
printf 'name: split\ntype: batch\ninstances: 5000\nsla: {preemptible: true}\ntask:\n  command: "true"\n  resources: {cpu: 1, memory: 1Gi}\n' > job.yaml

cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # clock ticks, user + system
declare -A before
for p in "${pids[@]}"; do before[$p]=$(cpu_of "$p"); done
start=$(date +%s.%N)
seq 1 $((tasks / 5000)) | xargs -P 8 -I{} "$bin" --addr "$addr" --token "$(cat m/token)" \
  job create -f job.yaml --pool /bench > /dev/null
submitted=$(date +%s.%N)
while true; do
  running=$(pl job list -o json | python3 -c 'import json,sys; print(sum(j.get("task_counts", {}).get("RUNNING", 0) for j in json.load(sys.stdin)["jobs"]))')
  (( running >= tasks )) && break
  sleep 0.2
done
end=$(date +%s.%N)
declare -A spent
for p in "${pids[@]}"; do spent[$p]=$(( $(cpu_of "$p") - ${before[$p]} )); done
fleet_ticks=0
for p in "${pids[@]:1}"; do fleet_ticks=$(( fleet_ticks + ${spent[$p]} )); done
python3 - "$out/grpc-split-$hosts-$tasks-$day.json" "$hosts" "$tasks" "$fleets" "$start" \
  "$submitted" "$end" "${spent[$master]}" "$fleet_ticks" "$(getconf CLK_TCK)" "$("$bin" --version)" <<'PY'
import json, os, sys
path, hosts, tasks, fleets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
start, submitted, end = map(float, sys.argv[5:8])
master, fleet, tck = int(sys.argv[8]), int(sys.argv[9]), int(sys.argv[10])
run = end - start
r = {
    "benchmark": "grpc-split",
    "version": sys.argv[11],
    "machine": {"cpus": os.cpu_count(), "kernel": os.uname().release},
    "config": {"hosts": hosts, "tasks": tasks, "fleet_processes": fleets, "job_size": 5000},
    "submit_s": round(submitted - start, 3),
    "run_s": round(run, 3),
    "tasks_per_second": round(tasks / run),
    "master_cpu_s": master / tck,
    "master_cpu_us_per_task": round(master / tck / tasks * 1e6, 1),
    "fleet_cpu_s": fleet / tck,
    "fleet_cpu_us_per_task": round(fleet / tck / tasks * 1e6, 1),
}
json.dump(r, open(path, "w"), indent=2)
print(json.dumps(r, indent=2))
PY
