#!/usr/bin/env bash
# The dependency check must fail, naming the file, line and rule, when a core folder includes
# a header it may not use, or a target links one it may not. Runs scripts/check-layers.py on a
# small tree made for the purpose.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/placement" "$tmp/src/store" "$tmp/build"
printf '#include "common/ids.h"\n#include "store/store.h"\n' > "$tmp/src/placement/engine.cc"
printf '#include <sqlite3.h>\n' > "$tmp/src/store/db.cc"
printf 'add_library(paceline_placement STATIC engine.cc)\n' > "$tmp/src/placement/CMakeLists.txt"
printf 'add_library(paceline_store STATIC db.cc)\n' > "$tmp/src/store/CMakeLists.txt"
printf 'paceline_placement: paceline_store absl::strings\npaceline_store: SQLite::SQLite3\n' \
  > "$tmp/build/link-graph.txt"
set +e
out=$(python3 "$repo/scripts/check-layers.py" --src "$tmp/src" --rules "$repo/docs/layers.ini" \
  --build "$tmp/build")
code=$?
set -e
echo "$out"
[[ $code -eq 1 ]] || { echo "expected exit 1, got $code"; exit 1; }
grep -q 'src/placement/engine.cc:2: includes store/store.h: placement may not use store' <<<"$out"
grep -q 'paceline_placement: links paceline_store of store, which placement does not use' <<<"$out"
grep -q 'paceline_placement: links sqlite (paceline_placement -> paceline_store -> SQLite::SQLite3)' <<<"$out"
! grep -q 'src/store/db.cc' <<<"$out"
echo "the dependency check catches a forbidden include and link"
