# PostgreSQL for scripts (sourced, not run): pg_start DIR starts Debian's postgresql-15 on
# 127.0.0.1 and a free port with its cluster in DIR/data (initdb on first use; as the `postgres`
# user when run as root), creates the database `paceline`, and sets
#   PG_PID    the postmaster's PID (stop it with pg_stop, by PID)
#   PG_PORT   its port
#   PG_URL    postgres://paceline@127.0.0.1:PORT/   (append a database name)
# PG_OPTS adds server settings ("-c name=value ..."). pg_createdb NAME creates another database. pg_stop stops the server (fast shutdown) and waits.
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
PG_PID=""

pg_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Runs a command as the `postgres` user when we are root.
pg_as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    setpriv --reuid=postgres --regid=postgres --init-groups "$@"
  else
    "$@"
  fi
}

pg_start() {
  local dir=$1
  [[ -n $PGBIN ]] || { echo "PostgreSQL is not installed: run scripts/install-deps.sh" >&2; return 1; }
  if [[ ! -d $dir/data ]]; then
    mkdir -p "$dir"
    [[ $(id -u) -eq 0 ]] && chown postgres "$dir"
    pg_as_owner "$PGBIN/initdb" -D "$dir/data" -U paceline --auth=trust -E UTF8 --locale=C \
      >"$dir/initdb.log"
  fi
  PG_PORT=$(pg_free_port)
  # shellcheck disable=SC2086  # PG_OPTS: extra server settings, e.g. "-c shared_buffers=1GB"
  pg_as_owner "$PGBIN/postgres" -D "$dir/data" -h 127.0.0.1 -p "$PG_PORT" -k "$dir" ${PG_OPTS:-} \
    >>"$dir/server.log" 2>&1 &
  PG_PID=$!
  for _ in $(seq 100); do
    "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 0.1
  done
  # The postmaster itself (the background job may be a wrapper around it): stopped by this PID.
  PG_PID=$(head -1 "$dir/data/postmaster.pid")
  PG_URL="postgres://paceline@127.0.0.1:$PG_PORT/"
  "$PGBIN/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U paceline -d postgres -tc \
    "SELECT 1 FROM pg_database WHERE datname = 'paceline'" | grep -q 1 || pg_createdb paceline
}

pg_createdb() { "$PGBIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U paceline "$1"; }

pg_stop() {
  [[ -n $PG_PID ]] || return 0
  kill -INT "$PG_PID" 2>/dev/null || true  # SIGINT: PostgreSQL's fast shutdown
  while kill -0 "$PG_PID" 2>/dev/null; do sleep 0.1; done
  PG_PID=""
}
