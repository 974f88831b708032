#!/usr/bin/env bash
# Starts a local highly available cluster, for trying failover on one machine: PostgreSQL in
# DATA/pg (initdb + postgres from Debian's postgresql-15, on 127.0.0.1 and a free port, as the
# `postgres` user when run as root), MASTERS masters (default 3) sharing it, and one agent that
# knows them all. Prints the addresses; Ctrl-C stops everything, by PID. See docs/operations.md.
#
#   scripts/ha-up.sh                  # then, in another shell:
#   paceline --addr ADDR --token-file data/ha/token job create -f examples/...
#   kill -9 <the leader's pid>        # a standby leads within a few seconds
#
# Knobs: DATA (default data/ha), MASTERS (3), LEASE (5s), PACELINE (build/release/paceline).
set -euo pipefail
cd "$(dirname "$0")/.."

PACELINE=${PACELINE:-build/release/paceline}
DATA=${DATA:-data/ha}
MASTERS=${MASTERS:-3}
LEASE=${LEASE:-5s}
[[ -x $PACELINE ]] || { echo "no $PACELINE: run 'make build' first" >&2; exit 1; }
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -n $PGBIN ]] || { echo "PostgreSQL is not installed: run scripts/install-deps.sh" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Runs a command as the `postgres` user when we are root.
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    setpriv --reuid=postgres --regid=postgres --init-groups "$@"
  else
    "$@"
  fi
}

mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)
pids=()
stop() {
  trap - INT TERM EXIT
  # The agent and the masters first, then PostgreSQL (SIGINT: its fast shutdown).
  for ((i = ${#pids[@]} - 1; i >= 1; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for ((i = ${#pids[@]} - 1; i >= 1; i--)); do wait "${pids[i]}" 2>/dev/null || true; done
  if ((${#pids[@]})); then
    kill -INT "${pids[0]}" 2>/dev/null || true
    while kill -0 "${pids[0]}" 2>/dev/null; do sleep 0.1; done
  fi
  wait 2>/dev/null || true
  echo "stopped"
}
trap stop INT TERM EXIT

if [[ ! -d $DATA/pg/data ]]; then
  mkdir -p "$DATA/pg"
  [[ $(id -u) -eq 0 ]] && chown postgres "$DATA/pg"
  as_pg "$PGBIN/initdb" -D "$DATA/pg/data" -U paceline --auth=trust -E UTF8 --locale=C >"$DATA/pg/initdb.log"
fi
PGPORT=$(free_port)
as_pg "$PGBIN/postgres" -D "$DATA/pg/data" -h 127.0.0.1 -p "$PGPORT" -k "$DATA/pg" >>"$DATA/pg/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PGPORT" && break
  sleep 0.1
done
# The postmaster itself (the background job may be a subshell around it): stopped by this PID.
pids[0]=$(head -1 "$DATA/pg/data/postmaster.pid")
"$PGBIN/psql" -q -h 127.0.0.1 -p "$PGPORT" -U paceline -d postgres -tc \
  "SELECT 1 FROM pg_database WHERE datname = 'paceline'" | grep -q 1 ||
  "$PGBIN/createdb" -h 127.0.0.1 -p "$PGPORT" -U paceline paceline
STORE="postgres://paceline@127.0.0.1:$PGPORT/paceline"

addrs=()
for ((i = 0; i < MASTERS; i++)); do
  port=$(free_port)
  addrs+=("127.0.0.1:$port")
  "$PACELINE" master --store "$STORE" --data-dir "$DATA/master$i" --token-file "$DATA/token" \
    --listen "127.0.0.1:$port" --http-listen 127.0.0.1:0 --lease "$LEASE" \
    >"$DATA/master$i.log" 2>&1 &
  pids+=($!)
  echo "master $i: pid $!, gRPC 127.0.0.1:$port, log $DATA/master$i.log"
  # The first master creates the token file the others read.
  for _ in $(seq 100); do [[ -s $DATA/token ]] && break; sleep 0.1; done
done
all=$(IFS=,; echo "${addrs[*]}")
"$PACELINE" agent --master "$all" --token-file "$DATA/token" --name "$(hostname)-ha" \
  --work-dir "$DATA/agent" >"$DATA/agent.log" 2>&1 &
pids+=($!)
echo "agent: pid $!, log $DATA/agent.log"
echo "store: $STORE"
echo "token: $DATA/token"
echo "try:   $PACELINE --addr ${addrs[0]} --token \$(cat $DATA/token) host list"
echo "Ctrl-C stops everything."
wait
