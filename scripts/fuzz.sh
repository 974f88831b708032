#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -DPACELINE_FUZZ=ON) in build/fuzz and runs each one for
# FUZZ_SECONDS seconds (default 30) on a scratch copy of its seed corpus from
# tests/fuzz/corpus/<target>/, so the checked-in corpus does not grow.
# Exits non-zero when any fuzzer finds a crash, a leak, a timeout or a broken invariant; the
# reproducer is left in fuzz-out/<target>/ (replay it: build/fuzz/src/{spec,sim,api,access,tls,secrets,archive,image,store,agent,dns,cron,main}/<target> FILE).
#
#   FUZZ_SECONDS=300 scripts/fuzz.sh               # longer runs
#   scripts/fuzz.sh job_spec_fuzz                  # one target
#   FUZZ_TIMEOUT=60 ...                            # per-input limit in seconds (default 25)
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-30}
# Per-input time limit; generous because the build machine is shared (a real hang, like
# yaml-cpp's on a stray ',', runs forever and is still caught).
TIMEOUT=${FUZZ_TIMEOUT:-25}
BUILD=${FUZZ_BUILD_DIR:-build/fuzz}
JOBS=${FUZZ_BUILD_JOBS:-2}
if (($# > 0)); then
  TARGETS=("$@")
else
  TARGETS=(pool_spec_fuzz job_spec_fuzz units_fuzz scenario_fuzz http_request_fuzz token_fuzz certificate_fuzz csr_fuzz secret_fuzz peloton_fuzz archive_fuzz
           layer_unpack_fuzz registry_documents_fuzz event_block_fuzz task_row_fuzz run_request_fuzz dns_message_fuzz
           cron_expression_fuzz daemon_config_fuzz cdi_spec_fuzz)
fi

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPACELINE_FUZZ=ON -DPACELINE_BENCHMARKS=OFF >/dev/null
ninja -C "$BUILD" -j "$JOBS" "${TARGETS[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1

failed=()
for t in "${TARGETS[@]}"; do
  corpus="$work/$t"
  mkdir -p "$corpus" "fuzz-out/$t"
  cp tests/fuzz/corpus/"$t"/* "$corpus"/
  args=(-max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 -max_len=4096
        -print_final_stats=1 -artifact_prefix="fuzz-out/$t/")
  if [[ -f "tests/fuzz/$t.dict" ]]; then args+=(-dict="tests/fuzz/$t.dict"); fi
  echo "== $t: ${SECONDS_EACH}s"
  bin=$(find "$BUILD/src" -type f -name "$t" -perm -u+x | head -n 1)
  if ! "$bin" "${args[@]}" "$corpus" 2>"$work/$t.log"; then
    tail -n 60 "$work/$t.log" >&2
    failed+=("$t")
  else
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)|Done [0-9]+ runs" "$work/$t.log" || true
  fi
done

if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]} (reproducers in fuzz-out/)" >&2
  exit 1
fi
echo "fuzz: all targets ran clean (${SECONDS_EACH}s each)"
