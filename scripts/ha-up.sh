#!/usr/bin/env bash
# Starts a local highly available cluster, for trying failover on one machine: PostgreSQL in
# DATA/pg (initdb + postgres from Debian's postgresql-15, on 127.0.0.1 and a free port, as the
# `postgres` user when run as root), MASTERS masters (default 3) sharing it, and one agent that
# knows them all. Prints the addresses; Ctrl-C stops everything, by PID. See docs/operations.md.
#
#   scripts/ha-up.sh                  # then, in another shell:
#   paceline --addr ADDR --ca data/ha/tls/ca.pem --token $(cat data/ha/token) job create -f ...
#   kill -9 <the leader's pid>        # a standby leads within a few seconds
#
# PATRONI=1: PostgreSQL replicated by Patroni over etcd instead (scripts/patroni-up.sh, in
# DATA/pg-ha: a primary and a synchronous standby); the masters connect to both with libpq's
# target_session_attrs=read-write, so they follow the primary through a database failover:
#   kill -9 $(head -1 DATA/pg-ha/pg0/data/postmaster.pid)   # the primary's, if pg0 is primary
#
# Knobs: DATA (default data/ha), MASTERS (3), LEASE (2.5s, the default), PATRONI, PACELINE
# (build/release/paceline).
set -euo pipefail
cd "$(dirname "$0")/.."

PACELINE=${PACELINE:-build/release/paceline}
DATA=${DATA:-data/ha}
MASTERS=${MASTERS:-3}
LEASE=${LEASE:-2.5s}
[[ -x $PACELINE ]] || { echo "no $PACELINE: run 'make build' first" >&2; exit 1; }
source scripts/pg-lib.sh
[[ -n $PGBIN ]] || { echo "PostgreSQL is not installed: run scripts/install-deps.sh" >&2; exit 1; }
free_port() { pg_free_port; }

mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)
pids=()
stop() {
  trap - INT TERM EXIT
  # The agent and the masters first, then PostgreSQL (SIGINT: its fast shutdown; SIGTERM:
  # patroni-up.sh stops its Patronis, their servers and etcd).
  for ((i = ${#pids[@]} - 1; i >= 1; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for ((i = ${#pids[@]} - 1; i >= 1; i--)); do wait "${pids[i]}" 2>/dev/null || true; done
  if [[ -n ${PATRONI:-} ]]; then
    kill "${pids[0]}" 2>/dev/null || true
  else
    pg_stop
  fi
  wait 2>/dev/null || true
  echo "stopped"
}
trap stop INT TERM EXIT

if [[ -n ${PATRONI:-} ]]; then
  scripts/patroni-up.sh "$DATA/pg-ha" >"$DATA/pg-ha.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1200); do
    [[ -s $DATA/pg-ha/cluster.json ]] && break
    kill -0 "${pids[0]}" 2>/dev/null || { cat "$DATA/pg-ha.log" >&2; exit 1; }
    sleep 0.1
  done
  STORE=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["store"])' \
    "$DATA/pg-ha/cluster.json")
  echo "database: Patroni over etcd, $DATA/pg-ha/cluster.json, log $DATA/pg-ha.log"
else
  pg_start "$DATA/pg"
  pids+=("$PG_PID")
  STORE="${PG_URL}paceline"
fi

addrs=()
for ((i = 0; i < MASTERS; i++)); do
  port=$(free_port)
  addrs+=("127.0.0.1:$port")
  "$PACELINE" master --store "$STORE" --data-dir "$DATA/master$i" --token-file "$DATA/token" \
    --agent-token-file "$DATA/agent-token" --tls-dir "$DATA/tls" \
    --listen "127.0.0.1:$port" --http-listen 127.0.0.1:0 --lease "$LEASE" \
    >"$DATA/master$i.log" 2>&1 &
  pids+=($!)
  echo "master $i: pid $!, gRPC 127.0.0.1:$port, log $DATA/master$i.log"
  # The first master creates the token files and the certificates the others read.
  for _ in $(seq 100); do
    [[ -s $DATA/token && -s $DATA/agent-token && -s $DATA/tls/master.pem ]] && break
    sleep 0.1
  done
done
all=$(IFS=,; echo "${addrs[*]}")
# Unique per DATA: agents of one name share their cgroups (docs/agent.md, "Isolation").
agent="$(hostname)-ha-$(realpath "$DATA" | md5sum | cut -c1-6)"
"$PACELINE" cert agent "$agent" --tls-dir "$DATA/tls" >/dev/null
"$PACELINE" agent --master "$all" --token-file "$DATA/agent-token" --name "$agent" \
  --ca "$DATA/tls/ca.pem" --cert "$DATA/tls/agents/$agent.pem" --key "$DATA/tls/agents/$agent.key" \
  --work-dir "$DATA/agent" >"$DATA/agent.log" 2>&1 &
pids+=($!)
echo "agent: pid $!, log $DATA/agent.log"
echo "store: $STORE"
echo "token: $DATA/token"
echo "ca:    $DATA/tls/ca.pem"
echo "try:   $PACELINE --addr ${addrs[0]} --ca $DATA/tls/ca.pem --token \$(cat $DATA/token) host list"
echo "Ctrl-C stops everything."
wait
