#!/usr/bin/env bash
# Starts a replicated PostgreSQL on one machine, for the highly available tests and for trying a
# database failover: ETCD etcd members (default 3, Debian's etcd-server) and NODES PostgreSQL
# servers (default 2, Debian's postgresql-15) each run by a Patroni (Debian's patroni), all on
# 127.0.0.1 and free ports, under DIR (default data/pg-ha). Patroni keeps one primary and
# synchronous standbys in strict synchronous mode: no commit is acknowledged before it is on two
# servers. A primary that crashes is not restarted but failed over at once (primary_start_timeout
# 0); it comes back as a standby, rewound when it had diverged.
#
#   scripts/patroni-up.sh DIR         # prints the store URL; Ctrl-C (or SIGTERM) stops it all
#
# When the cluster serves (a primary, a synchronous standby, the database `paceline`) it writes
# DIR/cluster.json:
#   {"store": "postgres://paceline@127.0.0.1:P0,127.0.0.1:P1/paceline?target_session_attrs=read-write",
#    "etcd":  [{"pid": PID, "client": "http://127.0.0.1:PORT"}, ...],
#    "nodes": [{"name": "pg0", "pid": PATRONI_PID, "api": "http://127.0.0.1:PORT",
#               "port": PG_PORT, "data": "DIR/pg0/data"}, ...]}
# A node's postmaster PID is the first line of DATA/postmaster.pid; its role is what Patroni's
# REST API answers (GET API/primary is 200 on the primary only). Logs: DIR/etcdN.log,
# DIR/pgN/patroni.log, DIR/pgN/data/log/.
#
# Everything is stopped by PID: the Patronis first (each stops its PostgreSQL), then etcd, then
# any postmaster a killed Patroni left behind. Knobs: NODES, ETCD, ADDRESSES (127.0.0.1: the
# loopback addresses PostgreSQL listens on, comma-separated; the store URL names the first, a
# test cuts a master off through another), FSYNC (off: the test bed;
# a killed process loses nothing the kernel has, only a machine crash would), TTL (Patroni's
# leader key, 20 s: how long a node that died whole keeps the primary role).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg-lib.sh

DIR=${1:-data/pg-ha}
NODES=${NODES:-2}
ETCD=${ETCD:-3}
FSYNC=${FSYNC:-off}
TTL=${TTL:-20}
ADDRESSES=${ADDRESSES:-127.0.0.1}
command -v patroni >/dev/null && command -v etcd >/dev/null && [[ -n $PGBIN ]] ||
  { echo "Patroni, etcd or PostgreSQL is not installed: run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
rm -f "$DIR/cluster.json"

etcd_pids=()
patroni_pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${patroni_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${patroni_pids[@]}"; do
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  for ((i = 0; i < NODES; i++)); do
    local pm="$DIR/pg$i/data/postmaster.pid"
    [[ -s $pm ]] && kill -9 "$(head -1 "$pm")" 2>/dev/null || true
  done
  for pid in "${etcd_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

# etcd: a cluster of ETCD members.
clients=()
peers=()
initial=""
for ((i = 0; i < ETCD; i++)); do
  clients+=("127.0.0.1:$(pg_free_port)")
  peers+=("127.0.0.1:$(pg_free_port)")
  initial+="${initial:+,}etcd$i=http://${peers[i]}"
done
for ((i = 0; i < ETCD; i++)); do
  etcd --name "etcd$i" --data-dir "$DIR/etcd$i" \
    --listen-client-urls "http://${clients[i]}" --advertise-client-urls "http://${clients[i]}" \
    --listen-peer-urls "http://${peers[i]}" --initial-advertise-peer-urls "http://${peers[i]}" \
    --initial-cluster "$initial" --initial-cluster-state new \
    --initial-cluster-token paceline-db >"$DIR/etcd$i.log" 2>&1 &
  etcd_pids+=($!)
done
hosts=$(IFS=,; echo "${clients[*]}")

# PostgreSQL under Patroni, as the `postgres` user when we are root (PostgreSQL refuses root).
ports=()
apis=()
for ((i = 0; i < NODES; i++)); do
  ports+=("$(pg_free_port)")
  apis+=("127.0.0.1:$(pg_free_port)")
  node="$DIR/pg$i"
  mkdir -p "$node"
  cat >"$node/patroni.yml" <<EOF
scope: paceline
namespace: /paceline-db/
name: pg$i
restapi:
  listen: ${apis[i]}
  connect_address: ${apis[i]}
etcd3:
  hosts: $hosts
bootstrap:
  dcs:
    ttl: $TTL
    loop_wait: 1
    retry_timeout: 5
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: true
    primary_start_timeout: 0
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_log_hints: 'on'
        max_connections: 200
        fsync: '$FSYNC'
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: $ADDRESSES:${ports[i]}
  connect_address: 127.0.0.1:${ports[i]}
  data_dir: $node/data
  bin_dir: $PGBIN
  pgpass: $node/pgpass
  authentication:
    superuser:
      username: paceline
    replication:
      username: replicator
    rewind:
      username: paceline
  parameters:
    unix_socket_directories: '$node'
EOF
  [[ $(id -u) -eq 0 ]] && chown -R postgres "$node"
  # setpriv execs Patroni: the PID is Patroni's.
  if [[ $(id -u) -eq 0 ]]; then
    setpriv --reuid=postgres --regid=postgres --init-groups patroni "$node/patroni.yml" \
      >>"$node/patroni.log" 2>&1 &
  else
    patroni "$node/patroni.yml" >>"$node/patroni.log" 2>&1 &
  fi
  patroni_pids+=($!)
done

# Serving: a primary, a synchronous standby (when there are two nodes or more), the database.
role_of() { curl -s -o /dev/null -w '%{http_code}' "http://$1/$2" || true; }
primary=-1
for _ in $(seq 1200); do
  primary=-1
  synced=$((NODES < 2))
  for ((i = 0; i < NODES; i++)); do
    [[ $(role_of "${apis[i]}" primary) == 200 ]] && primary=$i
    [[ $(role_of "${apis[i]}" sync) == 200 ]] && synced=1
  done
  ((primary >= 0 && synced)) && break
  sleep 0.1
done
((primary >= 0 && synced)) || { echo "no primary with a synchronous standby after 120 s: see $DIR" >&2; exit 1; }
"$PGBIN/psql" -q -h 127.0.0.1 -p "${ports[primary]}" -U paceline -d postgres -tc \
  "SELECT 1 FROM pg_database WHERE datname = 'paceline'" | grep -q 1 ||
  "$PGBIN/createdb" -h 127.0.0.1 -p "${ports[primary]}" -U paceline paceline
# Every server has it (a standby once it has replayed it): a client may try any first.
for ((i = 0; i < NODES; i++)); do
  for _ in $(seq 600); do
    "$PGBIN/psql" -q -h 127.0.0.1 -p "${ports[i]}" -U paceline -d paceline -tc "SELECT 1" \
      >/dev/null 2>&1 && break
    sleep 0.1
  done
done

addresses=""
nodes=""
for ((i = 0; i < NODES; i++)); do
  addresses+="${addresses:+,}127.0.0.1:${ports[i]}"
  nodes+="${nodes:+, }{\"name\": \"pg$i\", \"pid\": ${patroni_pids[i]}, \"api\": \"http://${apis[i]}\", \"port\": ${ports[i]}, \"data\": \"$DIR/pg$i/data\"}"
done
members=""
for ((i = 0; i < ETCD; i++)); do
  members+="${members:+, }{\"pid\": ${etcd_pids[i]}, \"client\": \"http://${clients[i]}\"}"
done
store="postgres://paceline@$addresses/paceline?target_session_attrs=read-write"
printf '{"store": "%s",\n "etcd": [%s],\n "nodes": [%s]}\n' "$store" "$members" "$nodes" \
  >"$DIR/cluster.json.tmp"
mv "$DIR/cluster.json.tmp" "$DIR/cluster.json"
echo "store: $store"
echo "primary: pg$primary; Patroni APIs: ${apis[*]}; etcd: $hosts"
echo "Ctrl-C stops it all."
wait
