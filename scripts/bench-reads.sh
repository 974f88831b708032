#!/usr/bin/env bash
# Read throughput of several masters against one (docs/operations.md "Reads on standbys"):
# scripts/ha-up.sh starts PostgreSQL, MASTERS masters (default 3) and an agent; JOBS jobs of
# TASKS sleeping tasks are created; then wrk sends authenticated reads over HTTPS with a
# viewer's token, as a user's browser or script does: QueryJobs and ListTasks (a job picked in
# turn), CONNS connections for DURATION,
#   one:  every connection to the leader;
#   all:  the connections split over every master, one wrk each, at the same time.
# The two alternate ROUNDS times (the machine's speed drifts). Prints a JSON report (requests/s
# of each run, the ratio all/one of the medians, the CPU seconds each master used in each run,
# the machine) and writes it to REPORT if set. On one machine the masters, wrk and PostgreSQL
# share its cores, so the CPU each master spends shows how the reads spread better than the
# sum of requests/s does.
#
#   scripts/bench-reads.sh                       # 3 masters, 50 jobs x 20 tasks, 10s runs
#   ROUNDS=1 DURATION=2s JOBS=5 scripts/bench-reads.sh    # the quick form the tests run
#
# Knobs: MASTERS (3), JOBS (50), TASKS (20), CONNS (48), DURATION (10s), ROUNDS (3), REPORT,
# PACELINE (build/release/paceline).
set -euo pipefail
cd "$(dirname "$0")/.."

PACELINE=${PACELINE:-build/release/paceline}
MASTERS=${MASTERS:-3}
JOBS=${JOBS:-50}
TASKS=${TASKS:-20}
CONNS=${CONNS:-48}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
command -v wrk >/dev/null || { echo "no wrk: run scripts/install-deps.sh" >&2; exit 1; }

WORK=$(mktemp -d /tmp/pl-bench-reads-XXXXXX)
chmod 755 "$WORK"  # PostgreSQL runs as its own user
DATA=$WORK/ha MASTERS=$MASTERS PACELINE=$PACELINE scripts/ha-up.sh >"$WORK/ha.log" 2>&1 &
ha=$!
jobs_made=()
stop() {
  # The jobs' tasks outlive their agent (it re-adopts them): kill the jobs first, and wait
  # until no task of theirs runs.
  for id in "${jobs_made[@]}"; do cli job kill "$id" >/dev/null 2>&1 || true; done
  for id in "${jobs_made[@]}"; do cli job wait "$id" --timeout 30s >/dev/null 2>&1 || true; done
  kill "$ha" 2>/dev/null || true
  wait "$ha" 2>/dev/null || true
  rm -rf "$WORK"
}
trap stop EXIT
for _ in $(seq 600); do
  grep -q "Ctrl-C stops everything" "$WORK/ha.log" 2>/dev/null && break
  kill -0 "$ha" 2>/dev/null || { cat "$WORK/ha.log" >&2; exit 1; }
  sleep 0.1
done
mapfile -t grpc < <(sed -n 's/^master [0-9]*: pid [0-9]*, gRPC \([^,]*\),.*/\1/p' "$WORK/ha.log")
all=$(IFS=,; echo "${grpc[*]}")
ca=$WORK/ha/tls/ca.pem
cli() { "$PACELINE" --addr "$all" --ca "$ca" --token "$(cat "$WORK/ha/token")" "$@"; }

# The cluster: a pool, the jobs, a viewer's token.
printf 'resources:\n  cpu: {reservation: 1, limit: 4}\n  memory: {reservation: 1Gi, limit: 8Gi}\n' \
  >"$WORK/pool.yaml"
cli pool create /bench -f "$WORK/pool.yaml" >/dev/null
printf "name: reader\ninstances: %d\ntask:\n  command: 'sleep 3600'\n  resources: {cpu: 0.001, memory: 1Mi}\n" \
  "$TASKS" >"$WORK/job.yaml"
for ((j = 0; j < JOBS; j++)); do
  jobs_made+=("$(cli job create -f "$WORK/job.yaml" --pool /bench)")
done
viewer=$(cli token create --user reader --role viewer --name bench-reads | sed -n 1p)

# Each master's HTTP address and PID, and which one leads.
http=()
pid=()
leader=""
for ((i = 0; i < MASTERS; i++)); do
  json=$WORK/ha/master$i/master.json
  http+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["http"])' "$json")")
  pid+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$json")")
  role=$("$PACELINE" --addr "${grpc[i]}" --ca "$ca" --token "$viewer" info -o json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["role"])')
  [[ $role == leader ]] && leader=$i
done
[[ -n $leader ]] || { echo "no master leads" >&2; exit 1; }
# The standbys' copies must hold every job before they are measured.
for ((i = 0; i < MASTERS; i++)); do
  for _ in $(seq 100); do
    n=$(curl -s --cacert "$ca" -H "Authorization: Bearer $viewer" \
      "https://${http[i]}/api/v1/JobService/QueryJobs?page_size=1000" |
      python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("jobs", [])))' || echo 0)
    [[ $n -ge $JOBS ]] && break
    sleep 0.2
  done
done

cat >"$WORK/reads.lua" <<EOF
-- QueryJobs and ListTasks in turn, ListTasks for each job in turn.
local n = 0
request = function()
  n = n + 1
  if n % 2 == 0 then return wrk.format("GET", "/api/v1/JobService/QueryJobs?page_size=50") end
  return wrk.format("GET", "/api/v1/TaskService/ListTasks?job_id=" .. ((n // 2) % $JOBS + 1))
end
EOF
# wrk against master $1 with $2 connections; prints requests/s and counts non-2xx answers.
run_wrk() {
  wrk -t 1 -c "$2" -d "$DURATION" -s "$WORK/reads.lua" -H "Authorization: Bearer $viewer" \
    "https://${http[$1]}" 2>&1
}
rate() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p'; }
# The CPU seconds every master has used so far, space-separated, in master order.
cpu() {
  local out=""
  for p in "${pid[@]}"; do
    out+="$(awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$p/stat") "
  done
  echo "$out"
}
# The CPU seconds each master used between two cpu() readings.
cpu_used() { python3 -c 'import sys; a, b = sys.argv[1].split(), sys.argv[2].split(); print(" ".join(str(round(float(y) - float(x), 2)) for x, y in zip(a, b)))' "$1" "$2"; }
bad() { sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p'; }

one=()
every=()
one_cpu=()
every_cpu=()
errors=0
for ((r = 0; r < ROUNDS; r++)); do
  before=$(cpu)
  out=$(run_wrk "$leader" "$CONNS")
  one_cpu+=("$(cpu_used "$before" "$(cpu)")")
  one+=("$(rate <<<"$out")")
  errors=$((errors + $(bad <<<"$out" | awk '{s+=$1} END {print s+0}')))
  per=$((CONNS / MASTERS))
  wrks=()
  before=$(cpu)
  for ((i = 0; i < MASTERS; i++)); do
    run_wrk "$i" "$per" >"$WORK/wrk$i.out" &
    wrks+=($!)
  done
  for p in "${wrks[@]}"; do wait "$p"; done
  every_cpu+=("$(cpu_used "$before" "$(cpu)")")
  total=0
  for ((i = 0; i < MASTERS; i++)); do
    got=$(rate <"$WORK/wrk$i.out")
    total=$(python3 -c "print(round($total + ${got:-0}, 2))")
    errors=$((errors + $(bad <"$WORK/wrk$i.out" | awk '{s+=$1} END {print s+0}')))
  done
  every+=("$total")
  echo "round $((r + 1)): one master ${one[r]} requests/s, $MASTERS masters $total requests/s" >&2
done

report=$(python3 - "$MASTERS" "$JOBS" "$TASKS" "$CONNS" "$DURATION" "$errors" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "${one[*]}" "${every[*]}" \
  "$leader" "$(IFS=';'; echo "${one_cpu[*]}")" "$(IFS=';'; echo "${every_cpu[*]}")" <<'EOF'
import json, os, platform, statistics, sys
masters, jobs, tasks, conns, duration, errors, commit, one, every, leader, one_cpu, every_cpu = \
    sys.argv[1:]
one = [float(x) for x in one.split()]
every = [float(x) for x in every.split()]
cpus = lambda text: [[float(x) for x in run.split()] for run in text.split(";")]
print(json.dumps({
    "masters": int(masters), "jobs": int(jobs), "tasks_per_job": int(tasks),
    "connections": int(conns), "duration": duration, "commit": commit,
    "reads": "QueryJobs and ListTasks over HTTPS, a viewer's token",
    "one_master_rps": one, "all_masters_rps": every,
    "ratio_of_medians": round(statistics.median(every) / statistics.median(one), 2),
    "leader": int(leader),
    # CPU seconds each master used during each run, in master order.
    "one_master_cpu_s": cpus(one_cpu), "all_masters_cpu_s": cpus(every_cpu),
    "non_2xx": int(errors),
    "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
}, indent=2))
EOF
)
echo "$report"
[[ -n ${REPORT:-} ]] && echo "$report" >"$REPORT"
exit 0
