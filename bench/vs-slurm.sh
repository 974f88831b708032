#!/usr/bin/env bash
# bench/vs-slurm.sh — N trivial jobs (`true`) through Slurm and through Paceline on this machine,
# in one run; prints both end-to-end times and the ratio and writes a Markdown result file.
#
# Usage:  bench/vs-slurm.sh [SLURM_HARNESS_DIR]          (or: make bench-slurm)
#
# Environment (all optional):
#   SLURM_HARNESS  the Slurm peer harness directory (default: ../shared/peers/slurm next to the
#                  repository); the first argument wins over it
#   N              tasks / jobs per run (10000)
#   RUNS           Paceline runs, and Slurm runs passed to its bench.sh (1)
#   SLURM_NODES    emulated Slurm nodes (100, the harness's fastest setting here)
#   CYCLE          the master's --cycle for `paceline up` (empty: the master's default)
#   NO_CGROUP_RUN  1 (default): also one Paceline run with --cgroup none, to show what cgroups cost
#   SKIP_SLURM     1: Paceline only (for a quick look; no ratio)
#   OUT            the result file (bench/results/vs-slurm-DATE.md)
#   PACELINE_BIN   the paceline binary (build/release/paceline; its task wrapper beside it)
#
# Slurm side: the harness's setup.sh / bench.sh / stop.sh (needs root; it creates a private
# network namespace). Paceline side: `paceline up` (master + real local agent, real processes,
# cgroups as detected) on free loopback ports with a fresh data directory, one batch job of N
# instances of `true`, timed from `job create` to `job wait` returning success.
#
# Slot parity: Slurm's emulated cluster is SLURM_NODES x 32 CPUs with 1 CPU per job (3,200 slots
# at 100 nodes) on 2 real cores. The local agent likewise offers more than the machine has
# (--cpu 320 --memory 64Gi), and each task asks for 0.1 cpu and 16Mi, so 3,200 can run at once.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
harness=${1:-${SLURM_HARNESS:-$root/../shared/peers/slurm}}
N=${N:-10000}
RUNS=${RUNS:-1}
SLURM_NODES=${SLURM_NODES:-100}
CYCLE=${CYCLE:-}
NO_CGROUP_RUN=${NO_CGROUP_RUN:-1}
SKIP_SLURM=${SKIP_SLURM:-0}
OUT=${OUT:-$root/bench/results/vs-slurm-$(date +%F).md}
bin=${PACELINE_BIN:-$root/build/release/paceline}
hz=$(getconf CLK_TCK)

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a - b}'; }
fdiv() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.1f", a / b; else print "nan"}'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

if [[ $SKIP_SLURM != 1 ]]; then
  [[ -x $harness/setup.sh && -x $harness/bench.sh && -x $harness/stop.sh ]] ||
    die "no Slurm peer harness in '$harness' (pass its directory or set SLURM_HARNESS)"
  harness=$(cd "$harness" && pwd)
  [[ $(id -u) == 0 ]] || die "the Slurm harness needs root (it creates a network namespace)"
fi
if [[ ! -x $bin ]]; then
  log "building $bin"
  make -C "$root" build >&2
fi

# ---------------------------------------------------------------- Paceline
up_pid=""
tmp=""
agent_name=""
cleanup_paceline() {
  if [[ -n $up_pid ]] && kill -0 "$up_pid" 2>/dev/null; then
    kill -INT "$up_pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$up_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$up_pid" 2>/dev/null; then log "paceline up did not stop; KILL $up_pid"; kill -KILL "$up_pid" 2>/dev/null || true; fi
    wait "$up_pid" 2>/dev/null || true
  fi
  up_pid=""
  if [[ -n $tmp ]]; then
    # Anything still running that was started from this data directory (wrappers, tasks).
    local left=() d
    for d in /proc/[0-9]*; do
      { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -qF -- "$tmp" && left+=("${d#/proc/}")
    done
    if ((${#left[@]})); then
      log "stopping ${#left[@]} leftover processes: ${left[*]}"
      kill -TERM "${left[@]}" 2>/dev/null || true
      sleep 1
      kill -KILL "${left[@]}" 2>/dev/null || true
    fi
    # Deleted when the script ends, not now: on ext4 without a journal, every inode allocation
    # in the next 60 s (longer while the inode table is dirty) steps over recently deleted
    # inodes (ext4's recently_deleted), and the next run's sandbox mkdirs would cost ~0.4 ms
    # instead of ~0.03 ms each. Wait a few minutes between invocations for the same reason.
    done_dirs+=("$tmp")
    # The agent's (now empty) cgroup directories, named after this run's unique agent name.
    for d in /sys/fs/cgroup/*/paceline."$agent_name"; do [[ -d $d ]] && rmdir "$d" 2>/dev/null; done
  fi
  tmp=""
}
slurm_started=0
done_dirs=()
cleanup() {
  cleanup_paceline
  ((${#done_dirs[@]})) && rm -rf "${done_dirs[@]}"
  if [[ $slurm_started == 1 ]]; then (cd "$harness" && ./stop.sh >&2) || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# utime+stime (clock ticks) of a process and its reaped children: "self children"
proc_cpu() { awk '{print $14 + $15, $16 + $17}' "/proc/$1/stat"; }
# per-thread CPU of one process: "tid ticks" lines (the threads are not named)
thread_cpu() {
  local t
  for t in /proc/"$1"/task/*; do
    [[ -r $t/stat ]] || continue
    printf '%s %s\n' "${t##*/}" "$(sed 's/.*) //' "$t/stat" 2>/dev/null | awk '{print $12 + $13}')"
  done | LC_ALL=C sort
}
# CPU time of a cgroup v1 cpuacct directory in ns (0 if absent)
cg_ns() { if [[ -r $1/cpuacct.usage ]]; then cat "$1/cpuacct.usage"; else echo 0; fi; }
# busy ticks of the whole machine
sys_busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }

# paceline_run CGROUP TAG : one run; prints one "paceline ..." key=value line
paceline_run() {
  local cgroup=$1 tag=$2
  tmp=$(mktemp -d /tmp/pl-vs-slurm-XXXXXX)
  chmod 755 "$tmp" # the local agent's tasks run as an unprivileged user
  agent_name=vs-slurm-$$-$tag
  local args=(--data-dir "$tmp/data" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0
    --name "$agent_name" --cpu 320 --memory 64Gi --cgroup "$cgroup")
  [[ -n $CYCLE ]] && args+=(--cycle "$CYCLE")
  "$bin" up "${args[@]}" >"$tmp/up.log" 2>&1 &
  up_pid=$!
  for _ in $(seq 1 300); do
    [[ -f $tmp/data/master.json ]] && break
    kill -0 "$up_pid" 2>/dev/null || { cat "$tmp/up.log" >&2; die "paceline up exited early"; }
    sleep 0.1
  done
  [[ -f $tmp/data/master.json ]] || die "paceline up wrote no master.json"
  local grpc http
  grpc=$(sed -E 's/.*"grpc":"([^"]+)".*/\1/' "$tmp/data/master.json")
  http=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$tmp/data/master.json")
  local ca=$tmp/data/tls/ca.pem  # the master serves TLS, HTTPS included, with its own CA
  for _ in $(seq 1 100); do curl -sf --cacert "$ca" "https://$http/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf --cacert "$ca" "https://$http/healthz" >/dev/null || die "no /healthz from paceline up"
  local pl=("$bin" --addr "$grpc" --token "$(cat "$tmp/data/token")" --ca "$ca")
  for _ in $(seq 1 100); do "${pl[@]}" host list 2>/dev/null | grep -q ' UP ' && break; sleep 0.1; done
  local iso
  iso=$("${pl[@]}" host list 2>/dev/null | awk 'NR > 1 {print}' | grep -o -E 'cgroup v[12]|none' | head -1 || true)
  iso=${iso:-$cgroup}
  iso=${iso// /_}

  cat >"$tmp/pool.yaml" <<'EOF'
description: vs-slurm benchmark
resources:
  cpu:    {reservation: 320,  limit: 320,  share: 1}
  memory: {reservation: 64Gi, limit: 64Gi, share: 1}
EOF
  cat >"$tmp/job.yaml" <<EOF
name: vs-slurm
type: batch
instances: $N
task:
  command: "true"
  resources: {cpu: 0.1, memory: 16Mi}
EOF
  "${pl[@]}" pool create /bench -f "$tmp/pool.yaml" >/dev/null

  # CPU accounting: the up process (master + agent threads), its reaped children, the cgroup
  # tree of the tasks (cgroup v1 cpuacct of the agent's parent, when there is one), the machine.
  local cg_dir="" c0 c1 th0 th1 cg0 cg1 s0 s1 l0 l1
  for d in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/cpu,cpuacct; do
    [[ -r $d/paceline.$agent_name/cpuacct.usage ]] && { cg_dir=$d/paceline.$agent_name; break; }
  done
  c0=$(proc_cpu "$up_pid"); th0=$(thread_cpu "$up_pid"); s0=$(sys_busy); l0=$(load1)
  local zyg_pids
  cg0=$(cg_ns "$cg_dir")

  local t0 t1 job rc=0
  t0=$(now)
  job=$("${pl[@]}" job create -f "$tmp/job.yaml" --pool /bench)
  "${pl[@]}" job wait "$job" --timeout 1h >"$tmp/wait.log" 2>&1 || rc=$?
  t1=$(now)

  c1=$(proc_cpu "$up_pid"); th1=$(thread_cpu "$up_pid"); s1=$(sys_busy); l1=$(load1)
  cg1=$(cg_ns "$cg_dir")
  # CPU of the up process's live children (the wrapper zygote) and of theirs (the supervisors,
  # which outlive their runs): each supervisor uses less than a clock tick, so their own CPU is
  # read in nanoseconds from /proc/PID/schedstat. The tasks are counted in their cgroups, not here.
  local kids_ticks=0 kids_ns=0 k
  for k in $(cat /proc/"$up_pid"/task/*/children 2>/dev/null); do
    kids_ticks=$((kids_ticks + $(awk '{print $14 + $15}' "/proc/$k/stat" 2>/dev/null || echo 0)))
    kids_ns=$((kids_ns + $(cat /proc/"$k"/task/*/children 2>/dev/null | tr ' ' '\n' |
      awk 'NF {f = "/proc/" $1 "/schedstat"; if ((getline l < f) > 0) {split(l, a, " "); s += a[1]}; close(f)} END {printf "%d", s}')))
  done
  zyg_pids=$(cat /proc/"$up_pid"/task/*/children 2>/dev/null | tr '\n' ' ')
  [[ $rc == 0 ]] || { tail -5 "$tmp/wait.log" >&2; log "job wait failed (exit $rc)"; }
  local succeeded
  succeeded=$("${pl[@]}" job get "$job" 2>/dev/null | grep -o -E 'SUCCEEDED [0-9]+' | tail -1 | awk '{print $2}')

  local wall self_ms child_ms busy_ms
  wall=$(fsub "$t1" "$t0")
  self_ms=$(awk -v a="${c1% *}" -v b="${c0% *}" -v hz="$hz" 'BEGIN {printf "%.0f", (a - b) * 1000 / hz}')
  child_ms=$(awk -v a="${c1#* }" -v b="${c0#* }" -v k="$kids_ticks" -v ns="$kids_ns" -v hz="$hz" 'BEGIN {printf "%.0f", (a - b + k) * 1000 / hz + ns / 1e6}')
  busy_ms=$(awk -v a="$s1" -v b="$s0" -v hz="$hz" 'BEGIN {printf "%.0f", (a - b) * 1000 / hz}')
  # per thread: delta ms, busiest first
  local threads
  threads=$(LC_ALL=C join -a2 -e0 -o '2.1,1.2,2.2' <(echo "$th0") <(echo "$th1") |
    awk -v hz="$hz" '{d = ($3 - $2) * 1000 / hz; if (d >= 10) printf "%.0f %s\n", d, $1}' |
    sort -rn | head -6 | awk '{printf "%s:%s,", $2, $1}')
  echo "paceline tag=$tag cgroup=$iso cycle=${CYCLE:-default} jobs=$N wait_rc=$rc succeeded=${succeeded:-0}" \
    "complete_s=$wall jobs_per_s=$(fdiv "$N" "$wall") up_cpu_ms=$self_ms children_cpu_ms=$child_ms" \
    "tasks_cgroup_cpu_ms=$(((cg1 - cg0) / 1000000)) machine_busy_ms=$busy_ms load_before=$l0 load_after=$l1" \
    "threads_ms=${threads%,} zygote_pids=${zyg_pids// /,}"
  cp "$tmp/up.log" "${TMPDIR:-/tmp}/vs-slurm-last-up.log" 2>/dev/null || true
  cleanup_paceline
}

# ---------------------------------------------------------------- run
machine_before=$(uptime)
log "load before: $machine_before"
results=()
for r in $(seq 1 "$RUNS"); do
  log "Paceline run $r/$RUNS: $N x true, cgroups as detected"
  line=$(paceline_run auto "run$r")
  echo "$line"
  results+=("$line")
done
if [[ $NO_CGROUP_RUN == 1 ]]; then
  log "Paceline run without cgroups (--cgroup none), for the breakdown"
  line=$(paceline_run none nocgroup)
  echo "$line"
  results+=("$line")
fi

slurm_lines=""
if [[ $SKIP_SLURM != 1 ]]; then
  log "Slurm: NODES=$SLURM_NODES setup"
  slurm_started=1
  (cd "$harness" && NODES=$SLURM_NODES ./setup.sh >&2)
  log "Slurm: N=$N RUNS=$RUNS MODES=array bench"
  slurm_lines=$(cd "$harness" && N=$N RUNS=$RUNS MODES=array ./bench.sh)
  echo "$slurm_lines" | grep '^slurm mode=' || true
  (cd "$harness" && ./stop.sh >&2)
  slurm_started=0
fi
machine_after=$(uptime)
log "load after: $machine_after"

# ---------------------------------------------------------------- summary
kv() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print substr($0, length(k) + 2); exit}'; }
per() { awk -v a="$1" -v n="$N" 'BEGIN {printf "%.2f", a / n}'; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
pl_times=$(for l in "${results[@]}"; do if [[ $(kv "$l" tag) == run* ]]; then kv "$l" complete_s; fi; done)
pl_s=$(median <<<"$pl_times")
slurm_s=$(echo "$slurm_lines" | awk '/^slurm summary/ && / metric=complete_s / {for (i = 1; i <= NF; i++) if ($i ~ /^median=/) print substr($i, 8)}')
ratio=nan
[[ -n $slurm_s && -n $pl_s ]] && ratio=$(fdiv "$slurm_s" "$pl_s")
echo "paceline summary jobs=$N runs=$RUNS complete_s=$pl_s jobs_per_s=$(fdiv "$N" "$pl_s")"
[[ -n $slurm_s ]] && echo "slurm    summary jobs=$N runs=$RUNS nodes=$SLURM_NODES mode=array complete_s=$slurm_s jobs_per_s=$(fdiv "$N" "$slurm_s")"
echo "ratio slurm/paceline end to end: ${ratio}x"

# ---------------------------------------------------------------- result file
{
  echo "# Real processes: Paceline vs Slurm, $(date +%F)"
  echo
  echo "$N trivial jobs (\`true\`) end to end on one machine: Slurm 22.05 (Debian, the Slurm peer"
  echo "harness, $SLURM_NODES emulated nodes, one \`sbatch --array=1-$N --wrap=true\`) and Paceline"
  echo "(\`paceline up\`: master + real local agent, real processes, cgroups as detected; one batch job of"
  echo "$N instances of \`true\`, timed from \`job create\` to \`job wait\` returning success)."
  echo
  echo "- Command: \`SLURM_HARNESS=<the Slurm peer harness directory> N=$N RUNS=$RUNS bench/vs-slurm.sh\`" \
    "(or \`make bench-slurm\`)${CYCLE:+; master cycle \`--cycle $CYCLE\`}"
  echo "- Commit: \`$(git -C "$root" rev-parse --short HEAD)\`$(git -C "$root" diff --quiet HEAD -- src 2>/dev/null || echo ' (src has uncommitted changes of other work)')"
  echo "- Machine: nproc = $(nproc), $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM," \
    "Linux $(uname -r), cgroup $(if [[ -f /sys/fs/cgroup/cgroup.controllers && -n $(cat /sys/fs/cgroup/cgroup.controllers) ]]; then echo v2; else echo v1; fi)"
  echo "- Load: before \`${machine_before##*load average: }\`, after \`${machine_after##*load average: }\` (1, 5, 15 min)." \
    "The machine is shared with other builds and tests, which slow both sides."
  echo
  echo "| system | N | end to end (s) | jobs/s |"
  echo "|---|---:|---:|---:|"
  [[ -n $slurm_s ]] && echo "| Slurm 22.05, $SLURM_NODES nodes, array | $N | $slurm_s | $(fdiv "$N" "$slurm_s") |"
  for l in "${results[@]}"; do
    echo "| Paceline, $(kv "$l" tag), isolation $(kv "$l" cgroup | tr '_' ' ') | $N | $(kv "$l" complete_s) | $(kv "$l" jobs_per_s) |"
  done
  echo
  echo "CPU per task (ms), from /proc/PID/stat of \`paceline up\` (master and agent threads), its"
  echo "children (the wrapper zygote and the supervisors, the live ones' from /proc/PID/schedstat), the"
  echo "tasks' cgroup tree (cpuacct), the machine:"
  echo
  echo "| run | up process | zygote and supervisors | task cgroups | whole machine (incl. other work) |"
  echo "|---|---:|---:|---:|---:|"
  for l in "${results[@]}"; do
    echo "| $(kv "$l" tag) | $(per "$(kv "$l" up_cpu_ms)") | $(per "$(kv "$l" children_cpu_ms)") |" \
      "$(per "$(kv "$l" tasks_cgroup_cpu_ms)") | $(per "$(kv "$l" machine_busy_ms)") |"
  done
  echo
  echo "**Ratio (Slurm time / Paceline time, cgroups on): ${ratio}×.**"
  echo
  echo "## Raw lines"
  echo
  echo '```'
  printf '%s\n' "${results[@]}"
  echo "$slurm_lines" | grep -E '^slurm (mode=|summary .*metric=(complete_s|jobs_per_s|start_s|not_ok) )' || true
  echo '```'
} >"$OUT"
log "wrote $OUT"
