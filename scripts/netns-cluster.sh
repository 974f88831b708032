#!/usr/bin/env bash
# A multi-host cluster on one machine: N agents, each in its own network namespace with its own
# address in the benchmarking range 198.18.0.0/15, joined by a bridge made for the run, and a
# master on the bridge's address that every namespace reaches (over TLS, with the cluster's
# certificates, as across real hosts). See docs/operations.md, "Try a multi-host cluster on one
# machine". Needs root, iproute2 and util-linux (flock, nsenter).
#
#   scripts/netns-cluster.sh up 4                # network, master, agents host-0..host-3
#   eval "$(scripts/netns-cluster.sh env)"       # PACELINE_ADDR, PACELINE_TOKEN, PACELINE_CA
#   scripts/netns-cluster.sh cli host list       # or: the CLI with those variables
#   scripts/netns-cluster.sh exec 2 ip -4 addr   # a command on host-2 (in its namespace)
#   scripts/netns-cluster.sh status
#   scripts/netns-cluster.sh down                # everything of the run, by PID and by name
#
# A run is named pln<K> (K in 0..511 picks its /24: 198.18.K for K < 256, else 198.19.K-256):
# bridge pln<K>-br with address .1, namespaces pln<K>-host-<I> each with eth0 at .<10+I> (the
# host end of its veth is pln<K>-v<I>), a default route via the bridge. Its state lives in
# /run/paceline-netns/pln<K>: run.env, hosts ("I NAMESPACE ADDRESS" lines), pids ("PID
# START NAME" lines: every process started for the run, with its start time so that a reused
# PID is never signalled). A run belongs to an owner process (`up`: the master; `net-up`: the
# caller's --owner); `up`, `net-up` and `gc` first tear down every run whose owner is dead, and
# any pln* namespace or bridge whose run has no state left.
#
# Subcommands (RUN: --run pln<K>; default: the only run there is):
#   up N [--dir DIR] [--host-timeout SECONDS] [--cpu C] [--memory M] [--ports A-B]
#        [--master-arg ARG]... [--agent-arg ARG]...
#       The network, a master on BRIDGE_ADDRESS (data in DIR/master, default the run's state dir)
#       and N agents host-<I> (work dirs DIR/host-<I>, cgroups under paceline-netns.pln<K>,
#       labels netns=NAMESPACE and address=ADDRESS, --address = their own address, given to
#       tasks as PACELINE_HOST_ADDRESS); returns when all N are connected (prints the time).
#   net-up N [--owner PID]
#       The network alone, for a caller that starts the daemons itself (the e2e fixture):
#       prints run.env's lines and a "host I NAMESPACE ADDRESS" line per host.
#   track PID NAME      records a process the caller started for the run (stopped by down/gc)
#   down                stops the run's processes (SIGTERM, then SIGKILL after 10 s), kills what
#                       is left in its namespaces, deletes namespaces, veths, bridge, cgroups
#                       and the state dir (a DIR given to up stays, with the logs)
#   status              every run: owner, hosts, processes alive
#   env                 `export` lines for the CLI to reach the run's master
#   cli ARGS...         the paceline CLI against the run's master
#   exec I CMD...       CMD in host I's network namespace
#   gc                  tears down runs whose owner is dead, and leftovers without state
#
# Knobs: PACELINE (the binary; default build/release/paceline, else paceline in PATH).
set -euo pipefail
shopt -s inherit_errexit

ROOT=/run/paceline-netns
REPO=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=pln

die() { echo "netns-cluster: $*" >&2; exit 1; }
need_root() { [[ $(id -u) == 0 ]] || die "needs root (network namespaces, bridges, cgroups)"; }

binary() {
  if [[ -n ${PACELINE:-} ]]; then echo "$PACELINE"
  elif [[ -x $REPO/build/release/paceline ]]; then echo "$REPO/build/release/paceline"
  elif command -v paceline >/dev/null; then command -v paceline
  else die "no paceline binary: set PACELINE or run 'make build'"; fi
}

# The start time of PID (field 22 of /proc/PID/stat, in clock ticks since boot); empty if gone.
start_of() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  set -- $stat
  echo "${20}"
}
alive() { [[ -n $1 && -n $2 && $(start_of "$1") == "$2" ]]; }

subnet_of() { (($1 < 256)) && echo "198.18.$1" || echo "198.19.$(($1 - 256))"; }

# --- state ----------------------------------------------------------------------------------

load() {  # load RUN: reads its run.env into RUN_* variables
  local f="$ROOT/$1/run.env"
  [[ -f $f ]] || die "no run $1 (no $f)"
  # shellcheck disable=SC1090
  source "$f"
}

runs() { for d in "$ROOT"/$PREFIX*; do [[ -d $d ]] && basename "$d"; done; return 0; }

pick_run() {  # the run named by --run, or the only one
  if [[ -n $RUN ]]; then echo "$RUN"; return; fi
  local all; all=$(runs)
  [[ -n $all ]] || die "no run (start one with: $0 up N)"
  (($(wc -l <<<"$all") == 1)) || die "several runs ($(echo $all)): name one with --run"
  echo "$all"
}

owner_alive() { load "$1"; alive "$RUN_OWNER" "$RUN_OWNER_START"; }

# --- teardown ------------------------------------------------------------------------------

stop_pids() {  # stop_pids FILE: SIGTERM to each recorded live process, SIGKILL after 10 s
  local file=$1 live=() pid start name
  [[ -f $file ]] || return 0
  while read -r pid start name; do
    alive "$pid" "$start" && { kill -TERM "$pid" 2>/dev/null || true; live+=("$pid $start"); }
  done <"$file"
  for _ in $(seq 100); do
    local left=()
    for p in "${live[@]}"; do alive $p && left+=("$p"); done
    live=("${left[@]}")
    ((${#live[@]} == 0)) && return 0
    sleep 0.1
  done
  for p in "${live[@]}"; do
    set -- $p
    alive "$1" "$2" && kill -KILL "$1" 2>/dev/null || true
  done
}

kill_namespace() {  # everything still running in namespace $1 (tasks the agents left), then it
  local ns=$1
  ip netns list 2>/dev/null | grep -qw "^$ns" || return 0
  for _ in $(seq 50); do
    local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -z $pids ]] && break
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  ip netns del "$ns" 2>/dev/null || true
}

remove_cgroups() {  # the cgroup subtree $1 in every hierarchy, deepest first
  local parent=$1
  [[ -n $parent && $parent == paceline-netns.* ]] || return 0
  for d in /sys/fs/cgroup/"$parent" /sys/fs/cgroup/*/"$parent"; do
    [[ -d $d ]] || continue
    for _ in $(seq 30); do
      find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
      [[ -d $d ]] || break
      sleep 0.1
    done
  done
}

forward_rule() {  # forward_rule -I|-D BRIDGE RUN: bridged traffic past a FORWARD policy of DROP
  iptables "$1" FORWARD -i "$2" -o "$2" -m comment --comment "paceline-netns $3" -j ACCEPT
}

teardown() {  # teardown RUN
  local run=$1 dir="$ROOT/$1"
  load "$run"
  stop_pids "$dir/pids"
  for ((i = 0; i < RUN_HOSTS; i++)); do
    kill_namespace "$run-host-$i"
    ip link del "$run-v$i" 2>/dev/null || true
  done
  ip link del "$RUN_BRIDGE" 2>/dev/null || true
  [[ $RUN_FORWARD_RULE == 1 ]] && { forward_rule -D "$RUN_BRIDGE" "$run" 2>/dev/null || true; }
  remove_cgroups "$RUN_CGROUP_PARENT"
  rm -rf "$dir"
}

gc() {  # under the lock: runs whose owner died, and pln* objects without a run
  local run
  for run in $(runs); do
    if [[ ! -f $ROOT/$run/run.env ]]; then
      rm -rf "${ROOT:?}/$run"  # a claim that never got further
    elif ! owner_alive "$run"; then
      echo "netns-cluster: tearing down $run (its owner is gone)" >&2
      teardown "$run"
    fi
  done
  local ns link
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+-host-[0-9]+$"); do
    [[ -d $ROOT/${ns%%-*} ]] || kill_namespace "$ns"
  done
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 |
    grep -E "^${PREFIX}[0-9]+-(br|v[0-9]+)$"); do
    [[ -d $ROOT/${link%%-*} ]] || ip link del "$link" 2>/dev/null || true
  done
  if command -v iptables >/dev/null; then
    for run in $(iptables -S FORWARD 2>/dev/null | grep -o "paceline-netns ${PREFIX}[0-9]*" | cut -d' ' -f2 | sort -u); do
      [[ -d $ROOT/$run ]] || forward_rule -D "$run-br" "$run" 2>/dev/null || true
    done
  fi
}

with_lock() { mkdir -p "$ROOT"; exec 9>"$ROOT/.lock"; flock 9; }
unlock() { flock -u 9; }

# --- setup ---------------------------------------------------------------------------------

claim() {  # under the lock: the next free K after the last run's; prints the run name
  # Round robin, so that a name comes back only 512 runs later: whoever still looks at a run
  # that just ended (its logs, a check that it is gone) never sees the next one under its name.
  local used next; used=$(ip -4 -o addr show 2>/dev/null | awk '{print $4}')
  next=$(cat "$ROOT/.next" 2>/dev/null || echo 0)
  [[ $next =~ ^[0-9]+$ ]] || next=0
  for ((j = 0; j < 512; j++)); do
    local k=$(((next + j) % 512))
    local run=$PREFIX$k net; net=$(subnet_of $k)
    [[ -e $ROOT/$run ]] && continue
    ip link show "$run-br" >/dev/null 2>&1 && continue
    grep -q "^${net//./\\.}\." <<<"$used" && continue
    mkdir "$ROOT/$run" && { echo $(((k + 1) % 512)) >"$ROOT/.next"; echo "$run"; return; }
  done
  die "no free /24 in 198.18.0.0/15"
}

net_up() {  # net_up N OWNER OWNER_START: claims a run, makes its network; prints its name
  local n=$1 owner=$2 owner_start=$3
  ((n >= 1 && n <= 200)) || die "N: expected 1..200 hosts, got $n"
  with_lock
  gc
  local run; run=$(claim)
  local k=${run#"$PREFIX"} dir="$ROOT/$run" net br gw
  net=$(subnet_of "$k"); br="$run-br"; gw="$net.1"
  chmod 755 "$dir"
  # Where bridged frames go through iptables (br_netfilter), a FORWARD chain that drops (as
  # Docker's does) would cut the hosts off from each other: the run lets its bridge's through.
  local fwd=0
  if [[ $(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null) == 1 ]] &&
    command -v iptables >/dev/null; then
    fwd=1
  fi
  cat >"$dir/run.env" <<EOF
RUN_NAME=$run
RUN_HOSTS=$n
RUN_BRIDGE=$br
RUN_BRIDGE_ADDRESS=$gw
RUN_SUBNET=$net.0/24
RUN_CGROUP_PARENT=paceline-netns.$run
RUN_FORWARD_RULE=$fwd
RUN_OWNER=$owner
RUN_OWNER_START=$owner_start
RUN_DATA=
EOF
  : >"$dir/pids"
  : >"$dir/hosts"
  unlock
  # A network half made is taken down again.
  # shellcheck disable=SC2064  # the run is known now
  trap "teardown $run >/dev/null 2>&1" EXIT
  # Two rounds of `ip -batch` (1 + N processes, not 9 N): the bridge, the namespaces and their
  # veths (the inner end made in its namespace as eth0); then each namespace's own side.
  {
    echo "link add $br type bridge"
    echo "addr add $gw/24 dev $br"
    echo "link set $br up"
    for ((i = 0; i < n; i++)); do
      echo "netns add $run-host-$i"
      echo "link add $run-v$i type veth peer name eth0 netns $run-host-$i"
      echo "link set $run-v$i master $br up"
    done
  } | ip -batch -
  if ((fwd == 1)) && ! forward_rule -I "$br" "$run" 2>/dev/null; then
    echo "netns-cluster: warning: no iptables rule for $br; if FORWARD drops, hosts cannot talk" >&2
  fi
  for ((i = 0; i < n; i++)); do
    local ns="$run-host-$i" addr="$net.$((10 + i))"
    printf '%s\n' "addr add $addr/24 dev eth0" "link set eth0 up" "link set lo up" \
      "route add default via $gw" | ip -n "$ns" -batch -
    echo "$i $ns $addr" >>"$dir/hosts"
  done
  # cgroup v2 wants the agents' parent to exist (v1 agents make it themselves).
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then mkdir -p "/sys/fs/cgroup/paceline-netns.$run"; fi
  trap - EXIT
  echo "$run"
}

track() {  # track RUN PID NAME
  local start; start=$(start_of "$2")
  [[ -n $start ]] || die "track: no process $2"
  echo "$2 $start $3" >>"$ROOT/$1/pids"
}

set_run_var() { sed -i "s|^$2=.*|$2=$3|" "$ROOT/$1/run.env"; }

up() {
  local n=${1:-} data="" host_timeout=10 cpu=2 memory=2Gi ports=31000-31999
  local master_args=() agent_args=()
  [[ $n =~ ^[0-9]+$ ]] || die "up N: N, the number of hosts, is missing"
  shift
  while (($#)); do
    case $1 in
      --dir) data=$2; shift 2 ;;
      --host-timeout) host_timeout=$2; shift 2 ;;
      --cpu) cpu=$2; shift 2 ;;
      --memory) memory=$2; shift 2 ;;
      --ports) ports=$2; shift 2 ;;
      --master-arg) master_args+=("$2"); shift 2 ;;
      --agent-arg) agent_args+=("$2"); shift 2 ;;
      *) die "up: unknown option $1" ;;
    esac
  done
  local bin; bin=$(binary)
  [[ -x $bin ]] || die "$bin is not executable"
  local t0; t0=$(date +%s%N)
  local run; run=$(net_up "$n" $$ "$(start_of $$)")
  local dir="$ROOT/$run"
  if [[ -z $data ]]; then data="$dir"; else mkdir -p "$data"; data=$(cd "$data" && pwd); fi
  # A run that did not come up is taken down again, after the tails of its logs.
  UP_RUN=$run UP_DATA=$data UP_OK=0
  trap up_failed EXIT
  load "$run"
  set_run_var "$run" RUN_DATA "$data"
  mkdir -p "$data/master"
  chmod 755 "$data"
  [[ $host_timeout =~ ^[0-9]+$ ]] || die "--host-timeout: expected whole seconds, got $host_timeout"
  # Six heartbeats per host timeout, as in production.
  local heartbeat="$((host_timeout * 1000 / 6))ms"
  # The master: TLS on the bridge address (its certificate names that address).
  setsid "$bin" master --data-dir "$data/master" --listen "$RUN_BRIDGE_ADDRESS:0" \
    --http-listen "$RUN_BRIDGE_ADDRESS:0" --host-timeout "${host_timeout}s" \
    --heartbeat-interval "$heartbeat" --cycle 20ms \
    "${master_args[@]}" >"$data/master.log" 2>&1 </dev/null &
  local master=$!
  track "$run" "$master" master
  # From here on the run lives as long as its master.
  set_run_var "$run" RUN_OWNER "$master"
  set_run_var "$run" RUN_OWNER_START "$(start_of "$master")"
  for _ in $(seq 300); do
    [[ -s $data/master/master.json ]] && break
    alive "$master" "$(start_of "$master")" || die "the master exited: $(tail -5 "$data/master.log")"
    sleep 0.05
  done
  [[ -s $data/master/master.json ]] || die "the master wrote no master.json: see $data/master.log"
  local grpc; grpc=$(sed -n 's/.*"grpc": *"\([^"]*\)".*/\1/p' "$data/master/master.json")
  local tls="$data/master/tls"
  while read -r i ns addr; do
    local name="host-$i"
    "$bin" cert agent "$name" --tls-dir "$tls" >/dev/null
    mkdir -p "$data/$name"
    chmod 755 "$data/$name"
    setsid nsenter --net="/run/netns/$ns" "$bin" agent --master "$grpc" \
      --token-file "$data/master/agent-token" --ca "$tls/ca.pem" \
      --cert "$tls/agents/$name.pem" --key "$tls/agents/$name.key" --name "$name" \
      --work-dir "$data/$name/work" --address "$addr" --cgroup-parent "$RUN_CGROUP_PARENT" \
      --label "netns=$ns" --label "address=$addr" --cpu "$cpu" --memory "$memory" --ports "$ports" \
      "${agent_args[@]}" >"$data/$name.log" 2>&1 </dev/null &
    track "$run" $! "$name"
  done <"$dir/hosts"
  write_env "$run" "$grpc" "$data"
  local connected=0
  for _ in $(seq 600); do
    connected=$(cli_of "$run" host list -o json 2>/dev/null | grep -c '"connected": true' || true)
    ((connected == n)) && break
    sleep 0.05
  done
  ((connected == n)) || die "$connected of $n agents connected after 30 s: see $data/host-*.log"
  local ms=$((($(date +%s%N) - t0) / 1000000))
  echo "run $run: $n hosts connected in ${ms} ms"
  echo "  master:  $grpc (pid $master, log $data/master.log)"
  while read -r i ns addr; do echo "  host-$i:  $addr in namespace $ns (log $data/host-$i.log)"; done <"$dir/hosts"
  echo "  CLI:     eval \"\$($0 env)\"; paceline host list"
  echo "  stop:    $0 down"
  UP_OK=1
}

up_failed() {
  ((UP_OK)) && return
  for log in "$UP_DATA"/*.log; do [[ -f $log ]] && { echo "--- $log" >&2; tail -n 15 "$log" >&2; }; done
  teardown "$UP_RUN"
}

write_env() {  # write_env RUN GRPC DATA: the admin's token too, so root's alone
  (
    umask 077
    cat >"$ROOT/$1/cli.env" <<EOF
export PACELINE_ADDR=$2
export PACELINE_CA=$3/master/tls/ca.pem
export PACELINE_TOKEN=$(cat "$3/master/token")
EOF
  )
}

cli_of() {
  local run=$1; shift
  [[ -f $ROOT/$run/cli.env ]] || die "run $run has no master started by up"
  # shellcheck disable=SC1090
  (source "$ROOT/$run/cli.env" && exec "$(binary)" "$@")
}

status() {
  local any=0
  for run in $(runs); do
    any=1
    [[ -f $ROOT/$run/run.env ]] || { echo "$run: being set up"; continue; }
    load "$run"
    local owner=dead
    alive "$RUN_OWNER" "$RUN_OWNER_START" && owner=alive
    echo "$run: bridge $RUN_BRIDGE $RUN_BRIDGE_ADDRESS, $RUN_HOSTS hosts, owner $RUN_OWNER ($owner)"
    while read -r i ns addr; do echo "  host-$i  $addr  $ns"; done <"$ROOT/$run/hosts"
    while read -r pid start name; do
      alive "$pid" "$start" && echo "  $name  pid $pid  running" || echo "  $name  pid $pid  gone"
    done <"$ROOT/$run/pids"
  done
  ((any)) || echo "no runs"
}

main() {
  RUN=""
  while [[ ${1:-} == --run ]]; do
    [[ ${2:-} =~ ^${PREFIX}[0-9]+$ ]] || die "--run: expected a run such as ${PREFIX}0, got '${2:-}'"
    RUN=$2
    shift 2
  done
  local cmd=${1:-}
  [[ -n $cmd ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
  shift
  case $cmd in
    up) need_root; up "$@" ;;
    net-up)
      need_root
      local n=${1:-} owner=$PPID
      [[ $n =~ ^[0-9]+$ ]] || die "net-up N: N, the number of hosts, is missing"
      shift
      [[ ${1:-} == --owner ]] && owner=$2
      local start; start=$(start_of "$owner")
      [[ -n $start ]] || die "net-up: no owner process $owner"
      local run; run=$(net_up "$n" "$owner" "$start")
      cat "$ROOT/$run/run.env"
      sed 's/^/host /' "$ROOT/$run/hosts"
      ;;
    track) need_root; track "$(pick_run)" "$@" ;;
    down)
      need_root
      local run; run=$(pick_run)
      teardown "$run"
      echo "run $run: down"
      ;;
    gc) need_root; with_lock; gc ;;
    status) status ;;
    env) cat "$ROOT/$(pick_run)/cli.env" ;;
    cli) cli_of "$(pick_run)" "$@" ;;
    exec)
      local run; run=$(pick_run)
      [[ ${1:-} =~ ^[0-9]+$ ]] || die "exec I CMD...: I, the host's index, is missing"
      local i=$1; shift
      exec nsenter --net="/run/netns/$run-host-$i" "$@"
      ;;
    *) die "unknown subcommand $cmd (up, net-up, track, down, gc, status, env, cli, exec)" ;;
  esac
}

main "$@"
