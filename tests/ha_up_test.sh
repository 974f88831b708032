#!/usr/bin/env bash
# scripts/ha-up.sh starts PostgreSQL, two masters and an agent; the agent registers with the
# leader; `kill -9` of the leader hands the cluster to the other master; SIGTERM to the script
# stops everything it started.
# Usage: tests/ha_up_test.sh SOURCE_DIR PACELINE_BINARY
set -euo pipefail
src=$1
bin=$2
tmp=$(mktemp -d /tmp/pl-ha-up-XXXXXX)
chmod 755 "$tmp"  # PostgreSQL and the agent's tasks run as unprivileged users
log=$tmp/ha-up.log
pid=""
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

setsid env DATA="$tmp/ha" MASTERS=2 LEASE=2s PACELINE="$bin" "$src/scripts/ha-up.sh" >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  grep -q "^Ctrl-C stops everything" "$log" && break
  kill -0 "$pid" 2>/dev/null || { echo "ha-up exited early:"; cat "$log"; exit 1; }
  sleep 0.2
done
token=$(cat "$tmp/ha/token")
mapfile -t addrs < <(sed -nE 's/^master [0-9]+: pid [0-9]+, gRPC ([^,]+),.*/\1/p' "$log")
mapfile -t mpids < <(sed -nE 's/^master [0-9]+: pid ([0-9]+),.*/\1/p' "$log")
[[ ${#addrs[@]} -eq 2 ]] || { echo "expected two masters:"; cat "$log"; exit 1; }

# Which master leads: the one that answers; the agent registers there.
leader=""
for _ in $(seq 1 150); do
  for i in 0 1; do
    if out=$("$bin" --addr "${addrs[i]}" --ca "$tmp/ha/tls/ca.pem" --token "$token" host list -o json 2>/dev/null) &&
       [[ $out == *'"connected": true'* || $out == *'"connected":true'* ]]; then
      leader=$i
      break 2
    fi
  done
  sleep 0.2
done
[[ -n $leader ]] || { echo "no leader with a connected agent:"; cat "$log" "$tmp"/ha/*.log; exit 1; }
other=$((1 - leader))
echo "master $leader leads; killing it"
kill -KILL "${mpids[leader]}"
ok=""
for _ in $(seq 1 150); do
  if out=$("$bin" --addr "${addrs[other]}" --ca "$tmp/ha/tls/ca.pem" --token "$token" host list -o json 2>/dev/null) &&
     [[ $out == *'"connected": true'* || $out == *'"connected":true'* ]]; then
    ok=1
    break
  fi
  sleep 0.2
done
[[ -n $ok ]] || { echo "the other master did not take over:"; cat "$tmp"/ha/*.log; exit 1; }
echo "master $other leads, the agent is back"

kill -TERM "$pid"
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then echo "ha-up did not stop in 30 s"; cat "$log"; exit 1; fi
grep -q "^stopped$" "$log" || { echo "no clean stop in the log:"; cat "$log"; exit 1; }
pgpid=$(head -1 "$tmp/ha/pg/data/postmaster.pid" 2>/dev/null || true)
for p in "${mpids[other]}" $pgpid; do
  if kill -0 "$p" 2>/dev/null; then echo "process $p left running"; exit 1; fi
done
echo "ha-up: failover on one machine works and everything stopped"
