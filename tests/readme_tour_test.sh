#!/usr/bin/env bash
# The README's "A short tour", run verbatim against `paceline up`: every command of its shell
# block, as written, in a directory laid out like a clone (examples/ and ./data), must exit 0.
# Only what ties it to one machine is replaced: the alias names the binary under test, and the
# HTTP port 5391 is the one this cluster was given (it listens on free loopback ports, so that
# tests can run at once). `paceline job watch` runs until Ctrl-C: it is stopped after 3 s.
# Usage: tests/readme_tour_test.sh SOURCE_DIR PACELINE
set -euo pipefail
src=$1
bin=$(realpath "$2")
tmp=$(mktemp -d /tmp/pl-tour-XXXXXX)
chmod 755 "$tmp"  # the local agent's tasks run as an unprivileged user
source "$src/scripts/stop-lib.sh"
pid=""
cleanup() {
  stop_pid "$pid"
  rm -rf "$tmp"
}
trap cleanup EXIT

ln -s "$src/examples" "$tmp/examples"
cd "$tmp"
"$bin" up --data-dir data --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 >up.log 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [[ -f data/master.json ]] && break
  kill -0 "$pid" 2>/dev/null || { echo "paceline up exited early:"; cat up.log; exit 1; }
  sleep 0.1
done
[[ -f data/master.json ]] || { echo "paceline up did not start:"; cat up.log; exit 1; }
http=$(sed -E 's/.*"http":"([^"]+)".*/\1/' data/master.json)
for _ in $(seq 1 300); do
  "$bin" host list -o json 2>/dev/null | grep -q '"connected": true' && break
  sleep 0.2
done

# The tour's block: from the first ```sh after "## A short tour" to its closing ```, with each
# command's continuation lines (ending in \) joined.
awk '/^## A short tour/{t=1} t&&/^```sh/{b=1;next} b&&/^```/{exit} b{print}' "$src/README.md" |
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' >tour.txt
[[ $(grep -c '^paceline ' tour.txt) -ge 20 ]] || { echo "the tour was not found:"; cat tour.txt; exit 1; }
grep -q '^alias paceline=./build/release/paceline' tour.txt ||
  { echo "the tour no longer starts with its alias"; exit 1; }

ran=0
while IFS= read -r line; do
  cmd=${line%%  #*}  # the comment after a command (two spaces, then #)
  [[ $cmd =~ ^[[:space:]]*(#|$) ]] && continue
  cmd=${cmd//127.0.0.1:5391/$http}
  if [[ $cmd == alias\ paceline=* ]]; then
    paceline() { "$bin" "$@"; }
    continue
  fi
  echo "\$ $cmd"
  set +e +o pipefail  # as in an interactive shell
  if [[ $cmd == "paceline job watch"* ]]; then
    eval "timeout -s INT 3 ${cmd/#paceline/\"\$bin\"}" >out.txt 2>&1
    rc=$?
    [[ $rc == 124 || $rc == 130 ]] && rc=0
  else
    eval "$cmd" >out.txt 2>&1
    rc=$?
  fi
  set -e -o pipefail
  head -c 2000 out.txt | head -n 8
  if [[ $rc != 0 ]]; then
    echo "FAILED (exit $rc): $cmd"
    cat out.txt
    echo "--- paceline up (last lines) ---"
    tail -n 20 up.log
    exit 1
  fi
  ran=$((ran + 1))
done <tour.txt
echo "the README's tour: $ran commands, every one exited 0"
