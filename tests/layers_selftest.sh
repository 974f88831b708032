#!/usr/bin/env bash
# The dependency check must fail, naming the file, line and rule, when a core folder includes
# a header it may not use, or a target links one it may not; when a part of the agent includes
# a part above it (or the runtime at its top), or has no section; when the master's side of the
# wire includes or links the agent; and when a section names a file that is not there. Runs
# scripts/check-layers.py on a small tree made for the purpose.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/placement" "$tmp/src/store" "$tmp/build"
printf '#include "common/ids.h"\n#include "store/store.h"\n' > "$tmp/src/placement/engine.cc"
printf '#include <sqlite3.h>\n' > "$tmp/src/store/db.cc"
printf 'add_library(paceline_placement STATIC engine.cc)\n' > "$tmp/src/placement/CMakeLists.txt"
printf 'add_library(paceline_store STATIC db.cc)\n' > "$tmp/src/store/CMakeLists.txt"
# The agent: its runtime at the top uses every part; a low part may not include a higher one.
mkdir -p "$tmp/src/agent/logs" "$tmp/src/agent/host" "$tmp/src/agent/launch" "$tmp/src/agent/newpart"
printf '#include "agent/host/usage.h"\n#include "agent/launch/sandbox_hook.h"\n' \
  > "$tmp/src/agent/task_runtime.cc"
printf '#include "agent/file_util.h"\n#include "agent/task_runtime.h"\n' > "$tmp/src/agent/logs/log.cc"
printf '#include "agent/launch/sandbox_hook.h"\n' > "$tmp/src/agent/host/usage.h"
printf '#include "agent/host/usage.h"\n' > "$tmp/src/agent/launch/sandbox_hook.h"
printf '#include "agent/task_runtime.h"\n' > "$tmp/src/agent/newpart/part.cc"
printf 'add_library(paceline_agent STATIC task_runtime.cc logs/log.cc)\n' \
  > "$tmp/src/agent/CMakeLists.txt"
# The wire: the agent's side may use the agent; the master's side may not, nor link it.
mkdir -p "$tmp/src/wire"
printf '#include "wire/core.h"\n#include "agent/task_event.h"\n' > "$tmp/src/wire/agent_runtime.cc"
printf '#include "wire/core.h"\n#include "agent/task_event.h"\n' > "$tmp/src/wire/agent_protocol.cc"
printf '#include "common/ids.h"\n' > "$tmp/src/wire/core.cc"
printf '%s\n' 'add_library(paceline_wire_core STATIC core.cc)' \
  'add_library(paceline_wire STATIC agent_protocol.cc)' \
  'add_library(paceline_wire_agent STATIC agent_runtime.cc)' > "$tmp/src/wire/CMakeLists.txt"
printf '%s\n' 'paceline_placement: paceline_store absl::strings' 'paceline_store: SQLite::SQLite3' \
  'paceline_agent: absl::status' 'paceline_wire_core: paceline_proto' \
  'paceline_wire: paceline_wire_core paceline_agent' \
  'paceline_wire_agent: paceline_wire_core paceline_agent' > "$tmp/build/link-graph.txt"
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
grep -q 'src/agent/logs/log.cc:2: includes agent/task_runtime.h: agent/logs may not use agent ' <<<"$out"
grep -q 'src/agent/host/usage.h:1: includes agent/launch/sandbox_hook.h: agent/host may not use agent/launch ' <<<"$out"
grep -q 'src/agent/newpart/: sub-folder has no section' <<<"$out"
grep -q '\[wire/core\]: no file src/wire/stream_batch.h or .cc' <<<"$out"
! grep -q 'src/agent/logs/log.cc:1\|src/agent/task_runtime.cc\|src/agent/launch/' <<<"$out"
grep -q 'src/wire/agent_protocol.cc:2: includes agent/task_event.h: wire never uses agent' <<<"$out"
grep -q 'paceline_wire: links agent (paceline_wire -> paceline_agent)' <<<"$out"
! grep -q 'src/wire/agent_runtime.cc\|src/wire/core.cc\|paceline_wire_agent\|paceline_wire_core' <<<"$out"
echo "the dependency check catches a forbidden include and link, in the agent's parts and the wire"
