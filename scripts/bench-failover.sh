#!/usr/bin/env bash
# Failover time of several masters on one PostgreSQL, on real processes (docs/benchmarks.md).
# scripts/ha-up.sh starts PostgreSQL, MASTERS masters and one agent in a temporary directory; a
# service of TASKS sleeping tasks is started; then REPS times:
#   - KILL=master (the default): the leader is killed with SIGKILL;
#     KILL=database: PostgreSQL is replicated by Patroni (ha-up.sh PATRONI=1) and the primary's
#     postmaster is killed with SIGKILL; Patroni promotes the synchronous standby;
#   - `leader_s`: time until a master serves as leader under a newer term (`info` says leader
#     and it answers a read); with KILL=master another one than the killed one;
#   - `agent_s`: time until the agent has registered with it (its log says so);
#   - `write_s`: time until a write (a pool created under /acked) is acknowledged again;
#   - KILL=master: the killed master is started again (a standby) and must follow the store;
#     KILL=database: the database must have a synchronous standby again; then the next
#     repetition.
# Throughout, a writer creates a pool every 0.1 s and notes each one acknowledged. At the end
# every task of the service must still be RUNNING its first run (a failover stops or restarts
# nothing) and every acknowledged pool must exist (nothing acknowledged was lost). Writes a JSON
# report (median and max of the times, each repetition, the machine and the commit) to OUT
# (default bench/results/failover-DATE.json, failover-db-DATE.json with KILL=database).
#
# Knobs: KILL, MASTERS (3), REPS (10), TASKS (100), LEASE (2.5s, the default lease), PACELINE
# (build/release/paceline), OUT; KEEP=1 keeps the logs and data in the temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

PACELINE=$(realpath "${PACELINE:-build/release/paceline}")
MASTERS=${MASTERS:-3}
REPS=${REPS:-10}
TASKS=${TASKS:-100}
LEASE=${LEASE:-2.5s}
KILL=${KILL:-master}
case $KILL in
  master) OUT=${OUT:-bench/results/failover-$(date -u +%Y-%m-%d).json}; PATRONI="" ;;
  database) OUT=${OUT:-bench/results/failover-db-$(date -u +%Y-%m-%d).json}; PATRONI=1 ;;
  *) echo "KILL=$KILL: expected master or database" >&2; exit 2 ;;
esac
[[ -x $PACELINE ]] || { echo "no $PACELINE: run 'make build' first" >&2; exit 1; }

tmp=$(mktemp -d /tmp/pl-failover-XXXXXX)
chmod 755 "$tmp"  # PostgreSQL and the agent's tasks run as unprivileged users
ha_pid=""
writer_pid=""
restarted=()
job=""
cleanup() {
  if [[ -n $writer_pid ]]; then kill "$writer_pid" 2>/dev/null || true; fi
  # The service's tasks outlive the agent by design: kill them through the cluster first.
  if [[ -n $job ]]; then
    pl --addr "$all" --timeout 30s job kill "$job" >/dev/null || true
    state=""
    for _ in $(seq 1 300); do
      state=$(pl --addr "$all" --timeout 5s job get "$job" -o json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["state"])' 2>/dev/null) || true
      [[ $state == KILLED ]] && break
      sleep 0.2
    done
    [[ $state == KILLED ]] || echo "warning: job $job is $state, not KILLED; its tasks end by themselves" >&2
  fi
  for p in "${restarted[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${restarted[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; done
  # ha-up.sh stops its masters, agent and PostgreSQL on SIGTERM.
  if [[ -n $ha_pid ]] && kill -0 "$ha_pid" 2>/dev/null; then
    kill -TERM "$ha_pid"
    wait "$ha_pid" 2>/dev/null || true
  fi
  if [[ -n ${KEEP:-} ]]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

log=$tmp/ha-up.log
DATA="$tmp/ha" MASTERS=$MASTERS LEASE=$LEASE PATRONI=$PATRONI PACELINE=$PACELINE \
  scripts/ha-up.sh >"$log" 2>&1 &
ha_pid=$!
for _ in $(seq 1 300); do
  grep -q "^Ctrl-C stops everything" "$log" && break
  kill -0 "$ha_pid" 2>/dev/null || { echo "ha-up exited early:"; cat "$log"; exit 1; }
  sleep 0.2
done
token=$(cat "$tmp/ha/token")
store=$(sed -nE 's/^store: (.*)$/\1/p' "$log")
mapfile -t addrs < <(sed -nE 's/^master [0-9]+: pid [0-9]+, gRPC ([^,]+),.*/\1/p' "$log")
mapfile -t pids < <(sed -nE 's/^master [0-9]+: pid ([0-9]+),.*/\1/p' "$log")
all=$(IFS=,; echo "${addrs[*]}")
pl() { "$PACELINE" --token "$token" --ca "$tmp/ha/tls/ca.pem" "$@"; }

# The index and term of the master that leads with a term above $1 and answers, or nothing;
# master $2 (one just killed), if given, is not asked.
leader_above() {
  local i info found
  for ((i = 0; i < MASTERS; i++)); do
    [[ $i == "${2:-}" ]] && continue
    info=$(pl --addr "${addrs[i]}" --timeout 1s info -o json 2>/dev/null) || continue
    found=$(python3 -c '
import json, sys
m = json.loads(sys.argv[2])
if m.get("role") == "leader" and m.get("term", 0) > int(sys.argv[1]):
    print(sys.argv[3], m["term"])' "$1" "$info" "$i")
    if [[ -n $found ]]; then
      echo "$found"
      return
    fi
  done
}
now() { date +%s.%N; }

cat >"$tmp/pool.yaml" <<'EOF'
resources: {cpu: {reservation: 64, limit: 64}, memory: {reservation: 64Gi, limit: 64Gi}}
EOF
cat >"$tmp/job.yaml" <<EOF
name: failover-sleepers
type: service
instances: $TASKS
task:
  command: "sleep 900"  # long enough for the benchmark; ends by itself if it is left behind
  resources: {cpu: 0.01, memory: 4Mi}
EOF
cat >"$tmp/small.yaml" <<'EOF'
resources: {cpu: {reservation: 0, limit: 1}, memory: {reservation: 0, limit: 1Gi}}
EOF
pl --addr "$all" pool create /bench -f "$tmp/pool.yaml" >/dev/null
pl --addr "$all" pool create /acked -f "$tmp/pool.yaml" >/dev/null
job=$(pl --addr "$all" job create --pool /bench -f "$tmp/job.yaml")
running() {
  pl --addr "$all" job get "$job" -o json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["task_counts"].get("RUNNING", 0))'
}
for _ in $(seq 1 600); do
  [[ $(running) -eq $TASKS ]] && break
  sleep 0.5
done
[[ $(running) -eq $TASKS ]] || { echo "the service did not start its $TASKS tasks" >&2; exit 1; }

# The writer: pool /acked/wN every 0.1 s; each acknowledged N goes to acked.txt.
touch "$tmp/acked.txt"
(
  n=0
  while true; do
    n=$((n + 1))
    if pl --addr "$all" --timeout 2s pool create "/acked/w$n" -f "$tmp/small.yaml" \
      >/dev/null 2>&1; then
      echo "w$n" >>"$tmp/acked.txt"
    fi
    sleep 0.1
  done
) &
writer_pid=$!

# KILL=database: the index of the Patroni node that answers 200 to $1 (primary; sync: a
# synchronous standby), or nothing.
pg_node() {
  python3 - "$tmp/ha/pg-ha/cluster.json" "$1" <<'EOF'
import json, sys, urllib.request
for i, n in enumerate(json.load(open(sys.argv[1]))["nodes"]):
    try:
        if urllib.request.urlopen(n["api"] + "/" + sys.argv[2], timeout=1).status == 200:
            print(i)
            break
    except Exception:
        pass
EOF
}

read -r leader term < <(leader_above 0)
results=()
for ((rep = 1; rep <= REPS; rep++)); do
  agent_lines=$(wc -l <"$tmp/ha/agent.log")
  skip=$leader
  if [[ $KILL == master ]]; then
    kill -KILL "${pids[leader]}"
  else
    primary=$(pg_node primary)
    [[ -n $primary ]] || { echo "repetition $rep: no primary" >&2; exit 1; }
    kill -KILL "$(head -1 "$tmp/ha/pg-ha/pg$primary/data/postmaster.pid")"
    skip=""
  fi
  killed=$(now)
  new=""
  for _ in $(seq 1 1200); do
    read -r new new_term < <(leader_above "$term" "$skip") || true
    [[ -n $new ]] && pl --addr "${addrs[new]}" --timeout 2s host list >/dev/null 2>&1 && break
    new=""
    sleep 0.05
  done
  [[ -n $new ]] || { echo "repetition $rep: no master led within 60 s" >&2; exit 1; }
  led=$(now)
  wrote=""
  # A new name each try: a try whose answer was lost may still have made its pool.
  for try in $(seq 1 1200); do
    if pl --addr "$all" --timeout 2s pool create "/acked/rep$rep-$try" -f "$tmp/small.yaml" \
      >/dev/null 2>"$tmp/write.err"; then
      wrote=$(now)
      break
    fi
    sleep 0.05
  done
  [[ -n $wrote ]] ||
    { echo "repetition $rep: no write was acknowledged: $(tail -1 "$tmp/write.err")" >&2; exit 1; }
  # The agent is back when it says it registered with a master: only a leader takes it; with a
  # database killed the lead may pass on once more (after a takeover the master counts its
  # known hosts as connected until they register or time out, so `host list` cannot tell).
  back=""
  for _ in $(seq 1 1200); do
    if tail -n "+$((agent_lines + 1))" "$tmp/ha/agent.log" |
      grep -q "registered with the master at "; then
      back=$(now)
      break
    fi
    sleep 0.05
  done
  [[ -n $back ]] || { echo "repetition $rep: the agent did not register again" >&2; exit 1; }
  results+=("$(python3 -c "print($led - $killed, $back - $killed, $wrote - $killed)")")
  read -r led_s back_s wrote_s <<<"${results[-1]}"
  echo "repetition $rep: master $new leads (term $new_term) $led_s s after the kill;" \
    "agent back at $back_s s; a write acknowledged at $wrote_s s"
  leader=$new
  term=$new_term
  if [[ $KILL == database ]]; then
    # Whole again: a synchronous standby (strict synchronous mode: no commit without one).
    for _ in $(seq 1 1200); do
      [[ -n $(pg_node sync) ]] && break
      sleep 0.1
    done
    [[ -n $(pg_node sync) ]] || { echo "repetition $rep: no synchronous standby again" >&2; exit 1; }
    continue
  fi
  # The killed master comes back as a standby that follows the store.
  port=${addrs[skip]##*:}
  "$PACELINE" master --store "$store" --data-dir "$tmp/ha/master$skip" \
    --token-file "$tmp/ha/token" --agent-token-file "$tmp/ha/agent-token" \
    --tls-dir "$tmp/ha/tls" --listen "127.0.0.1:$port" --http-listen 127.0.0.1:0 \
    --lease "$LEASE" >>"$tmp/ha/master$skip.log" 2>&1 &
  pids[skip]=$!
  restarted+=($!)
  disown "$!"  # killed on purpose later: no job-control message
  for _ in $(seq 1 300); do
    lag=$(pl --addr "${addrs[skip]}" --timeout 2s info -o json 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["replication_lag_ms"])' 2>/dev/null) || true
    [[ -n $lag && $lag -ge 0 ]] && break
    sleep 0.1
  done
done
kill "$writer_pid" 2>/dev/null || true
wait "$writer_pid" 2>/dev/null || true
writer_pid=""

# Nothing was restarted by the failovers, and nothing acknowledged was lost.
pl --addr "$all" task list "$job" -o json | python3 -c '
import json, sys
tasks = json.load(sys.stdin)["tasks"]
bad = [t for t in tasks if t["state"] != "RUNNING" or t.get("run", 1) != 1]
if bad:
    sys.exit(f"{len(bad)} of {len(tasks)} tasks were not running their first run: {bad[:3]}")
' || {
  # What ended the first run, for whoever reads the failure: its events, and what the masters
  # and the agent logged (without the request lines).
  pl --addr "$all" task events "$job/0" >&2 || true
  for f in "$tmp"/ha/master*.log "$tmp/ha/agent.log"; do
    echo "--- ${f##*/}" >&2
    grep -v '\] \[info\] \(GET\|POST\|http\)' "$f" | tail -n 40 >&2 || true
  done
  exit 1
}
acked=$(pl --addr "$all" pool list -o json | python3 -c '
import json, sys
have = {p["path"] for p in json.load(sys.stdin)["pools"]}
acked = ["/acked/" + n for n in open(sys.argv[1]).read().split()]
lost = [p for p in acked if p not in have]
if lost:
    sys.exit(f"{len(lost)} of {len(acked)} acknowledged pools were lost: {lost[:5]}")
print(len(acked))
' "$tmp/acked.txt")

mkdir -p "$(dirname "$OUT")"
python3 - "$OUT" "$KILL" "$MASTERS" "$TASKS" "$LEASE" "$acked" \
  "$("$PACELINE" --version 2>/dev/null | head -1)" "${results[@]}" <<'EOF'
import json, os, platform, statistics, subprocess, sys, datetime
out, kill, masters, tasks, lease, acked, version, *reps = sys.argv[1:]
reps = [tuple(map(float, r.split())) for r in reps]
led = [r[0] for r in reps]
back = [r[1] for r in reps]
wrote = [r[2] for r in reps]
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
mem = next((int(l.split()[1]) * 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
report = {
    "benchmark": "failover", "killed": kill,
    "masters": int(masters), "service_tasks": int(tasks), "lease": lease,
    "leader_s": {"median": statistics.median(led), "max": max(led), "min": min(led)},
    "agent_s": {"median": statistics.median(back), "max": max(back), "min": min(back)},
    "write_s": {"median": statistics.median(wrote), "max": max(wrote), "min": min(wrote)},
    "acknowledged_writes": int(acked), "lost_writes": 0,
    "repetitions": [{"leader_s": round(a, 3), "agent_s": round(b, 3), "write_s": round(c, 3)}
                    for a, b, c in reps],
    "machine": {"cpus": os.cpu_count(), "model": model, "memory_bytes": mem,
                "kernel": platform.release(), "version": version, "commit": commit,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")},
}
json.dump(report, open(out, "w"), indent=2)
print(f"{kill} failover over {len(reps)} repetitions: leader in {report['leader_s']['median']:.2f} s median, "
      f"{report['leader_s']['max']:.2f} s max; agent back in {report['agent_s']['median']:.2f} s median, "
      f"{report['agent_s']['max']:.2f} s max; writes in {report['write_s']['median']:.2f} s median, "
      f"{report['write_s']['max']:.2f} s max; {acked} acknowledged writes, none lost -> {out}")
EOF
