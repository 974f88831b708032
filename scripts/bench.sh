#!/usr/bin/env bash
# Runs the benchmarks and writes their JSON reports (each with the machine, the commit and the
# date) into bench/results/ (or $BENCH_OUT).
# Usage: scripts/bench.sh BUILD_DIR [short|full]
#   short (make bench):      a few minutes: the micro-benchmarks, the API for 5 s, the scale
#                            benchmark at 2,000 hosts / 40,000 tasks and over gRPC at 200 hosts,
#                            retention: 200,000 tasks over a simulated day (4h window),
#                            containers (root): 20 warm starts, 100 at once, a 20 MB cold load,
#                            the FGD paper's experiment when $PACELINE_ALIBABA_TRACE is set.
#   full  (make bench-full): the published sizes: 50,000 hosts / 1,000,000 tasks in process,
#                            1,000 hosts over gRPC, the API for 10 s, `paceline sim` at 50,000
#                            hosts (about 2 minutes and 1.5 GiB of memory on 2 cores).
# The Slurm comparison needs root and the Slurm harness: make bench-slurm.
set -euo pipefail
build=${1:-build/release}
mode=${2:-short}
case $mode in short | full) ;; *) echo "mode: '$mode'; expected short or full" >&2; exit 2 ;; esac
out=${BENCH_OUT:-bench/results}
day=$(date -u +%Y-%m-%d)
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== micro-benchmarks (Google Benchmark)"
min_time=0.1
[[ $mode == full ]] && min_time=0.5
while IFS= read -r b; do
  [[ $b == *_bench ]] || continue
  echo "-- $(basename "$b")"
  "$b" --benchmark_min_time=$min_time --benchmark_out="$tmp/$(basename "$b").json" \
    --benchmark_out_format=json ${BENCH_FILTER:+--benchmark_filter=$BENCH_FILTER}
done < "$build/benchmarks.txt"
python3 scripts/bench_summary.py --commit "$("$bin" --version)" "$tmp"/*.json \
  > "$out/micro-$mode-$day.json"
echo "wrote $out/micro-$mode-$day.json"

echo "== API: 100 concurrent clients"
duration=5s
[[ $mode == full ]] && duration=10s
"$bin" bench api --clients 100 --duration $duration --report "$out/api-$mode-$day.json"

echo "== scale: one master, emulated hosts"
if [[ $mode == full ]]; then
  "$bin" bench scale --hosts 50000 --tasks 1000000 --report "$out/scale-inproc-$mode-$day.json"
  "$bin" bench scale --transport grpc --hosts 1000 --tasks 30000 --job-mix 10:0.2,100:0.3,1000:0.5 \
    --report "$out/scale-grpc-$mode-$day.json"
else
  "$bin" bench scale --hosts 2000 --tasks 40000 --report "$out/scale-inproc-$mode-$day.json"
  "$bin" bench scale --transport grpc --hosts 200 --tasks 5000 --job-mix 10:0.2,100:0.3,1000:0.5 \
    --report "$out/scale-grpc-$mode-$day.json"
fi

if [[ $mode == short ]]; then
  echo "== retention: finished tasks over simulated time (make bench-retention: 10M over a week)"
  "$bin" bench retention --tasks 200000 --span 1d --retain-terminal 4h \
    --report "$out/retention-$mode-$day.json"
fi

if [[ $mode == short ]]; then
  echo "== containers: warm starts, 100 at once, a cold load (make bench-containers: the full run)"
  if [[ $(id -u) -eq 0 ]] && command -v crun > /dev/null && [[ -x /bin/busybox ]]; then
    scripts/make-test-image.sh "$tmp/image" > /dev/null
    scripts/make-test-image.sh "$tmp/image-big" --filler-mb 20 > /dev/null
    timeout 60 "$bin" bench containers --image-file "$tmp/image" --runs 20 --command true \
      --containers 100 --cold-runs 1 --cold-image-file "$tmp/image-big" \
      --report "$out/containers-$mode-$day.json"
  else
    echo "skipped: needs root, crun and busybox-static"
  fi
fi

if [[ $mode == short ]]; then
  echo "== the FGD paper's experiment under its protocol (make bench-fgd)"
  BENCH_OUT=$out scripts/bench-fgd.sh "$build" "${PACELINE_ALIBABA_TRACE:-}"
fi

if [[ $mode == full ]]; then
  echo "== paceline sim: 50,000 hosts, 1,000,000 tasks through the scheduling core"
  python3 bench/scenarios/make_scale_scenario.py 50000 1000000 > "$tmp/sim.yaml"
  "$bin" sim "$tmp/sim.yaml" --report "$tmp/sim.json"
  # The summary and the timing (the per-interval series of this size is 1.4 MB).
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
json.dump({k: r[k] for k in ("scenario", "summary", "timing")}, sys.stdout, indent=2)' \
    "$tmp/sim.json" > "$out/sim-scale-$mode-$day.json"
fi
