#!/usr/bin/env bash
# The Python client's tests against a real `paceline up`, in a temporary directory:
#   1. a venv made with --system-site-packages (Debian's python3-grpcio, python3-protobuf and
#      python3-yaml) and `pip install` of clients/python into it with no package index: what a
#      user does, offline;
#   2. mypy (strict) over the installed package, the tests and the examples;
#   3. `paceline up` on free loopback ports, serving TLS (the default), its data in ./data;
#   4. the unittest suite (tests/test_*.py) from that directory with the venv's python, so that
#      Client.from_env() finds the master, its token and its CA through ./data, as the CLI does.
# The master is stopped by its PID and the directory removed, whatever the outcome.
# Usage: clients/python/tests/run_tests.sh PACELINE_BINARY [UNITTEST_ARGS...]
# $PYTHON: the interpreter that makes the venv (default /usr/bin/python3, Debian's).
# $PACELINE_TEST_SWEEP_COUNT: instances of the sweep example (default 1000).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)  # clients/python
paceline=$(realpath "$1")
shift
python=${PYTHON:-/usr/bin/python3}
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree

tmp=$(mktemp -d /tmp/pl-python-XXXXXX)
chmod 755 "$tmp"  # the local agent's tasks run as an unprivileged user
source "$here/../../scripts/stop-lib.sh"
pid=""
cleanup() {
  stop_pid "$pid"
  rm -rf "$tmp"
}
trap cleanup EXIT

start=$SECONDS
"$python" -m venv --system-site-packages "$tmp/venv"
# --no-index: nothing may come from a package index; the build backend needs none.
"$tmp/venv/bin/pip" install --quiet --no-index --no-cache-dir --disable-pip-version-check "$here"
echo "installed into a fresh venv in $((SECONDS - start))s"
# The type hints hold: the installed package (with the generated stubs), the tests, the examples.
site=$(cd "$tmp" && "$tmp/venv/bin/python" -c 'import os, paceline; print(os.path.dirname(paceline.__file__))')
mypy --config-file "$here/pyproject.toml" --cache-dir "$tmp/mypy-cache" \
  --python-executable "$tmp/venv/bin/python" "$site" "$here/tests" "$here/examples" "$here/_build"

"$paceline" up --data-dir "$tmp/data" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  --name "py-${tmp##*-}" --cpu 2 --memory 2Gi >"$tmp/up.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  [[ -f $tmp/data/master.json ]] && break
  kill -0 "$pid" 2>/dev/null || { echo "paceline up exited early:"; cat "$tmp/up.log"; exit 1; }
  sleep 0.2
done
[[ -f $tmp/data/master.json ]] || { echo "paceline up wrote no master.json:"; cat "$tmp/up.log"; exit 1; }
http=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$tmp/data/master.json")
for _ in $(seq 1 100); do
  curl -sf --cacert "$tmp/data/tls/ca.pem" "https://$http/healthz" >/dev/null && break
  sleep 0.2
done
echo "paceline up serving at $http after $((SECONDS - start))s"

status=0
(
  cd "$tmp"
  # Only what the tests give: no variable or ~/.paceline/config of the caller's.
  env -u PACELINE_ADDR -u PACELINE_TOKEN -u PACELINE_CA HOME="$tmp" PACELINE_TEST_CLUSTER=1 \
    "$tmp/venv/bin/python" -m unittest discover -s "$here/tests" -t "$here/tests" -v "$@"
) || status=$?
echo "tests done after $((SECONDS - start))s"
if ((status != 0)); then
  echo "--- paceline up (last lines) ---"
  tail -n 30 "$tmp/up.log"
fi
exit "$status"
