#!/usr/bin/env bash
# The FGD paper's experiment under its own protocol (docs/sim.md, "The FGD paper's protocol"):
# the paper's 17 task lists of the Alibaba GPU trace (those bench/fgd-paper-published.csv has
# figures for; a list the trace directory lacks is skipped and named), the paper's six
# policies and Paceline's `default`, seeds 42..51, arrivals to 130 % of the GPU capacity. Writes
# into bench/results/ (or $BENCH_OUT): one JSON report and two plots per task list, and
# fgd-protocol-DAY.md with the reproduction table against the paper's published figures and
# the comparison with FGD. Runs $FGD_JOBS task lists at once (default: one per cpu).
# Usage: scripts/bench-fgd.sh BUILD_DIR TRACE_DIR
#   TRACE_DIR holds openb_node_list_gpu_node.csv and openb_pod_list_*.csv
#   (cluster-trace-gpu-v2023/csv of github.com/alibaba/clusterdata); $PACELINE_ALIBABA_TRACE
#   when not given. Skipped without it.
set -euo pipefail
build=${1:-build/release}
trace=${2:-${PACELINE_ALIBABA_TRACE:-}}
out=${BENCH_OUT:-bench/results}
published=bench/fgd-paper-published.csv
day=$(date -u +%Y-%m-%d)
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
if [[ -z $trace || ! -f $trace/openb_node_list_gpu_node.csv ]]; then
  echo "skipped: no Alibaba GPU trace (give its directory, or set PACELINE_ALIBABA_TRACE)"
  exit 0
fi
mkdir -p "$out"
lists=()
for name in $(grep -v '^#' "$published" | tail -n +2 | cut -d, -f1 | uniq); do
  if [[ -f $trace/openb_pod_list_$name.csv ]]; then
    lists+=("$name")
  else
    echo "-- $name: not in $trace, skipped"
  fi
done
[[ ${#lists[@]} -gt 0 ]] || { echo "no task list of the paper in $trace" >&2; exit 1; }
run_list() {  # NAME: one task list, every profile and seed; its summary goes to NAME.log
  local log="$out/.fgd-$1.log" rc=0
  "$bin" sim --trace alibaba-gpu "$trace/openb_node_list_gpu_node.csv" \
    "$trace/openb_pod_list_$1.csv" --fill --protocol fgd --seed 42 --repeat 10 \
    --report "$out/fgd-protocol-$1-$day.json" --plot "$out/fgd-protocol-$1-$day" \
    > "$log" 2>&1 || rc=$?
  echo "-- $1"
  tail -9 "$log"
  rm -f "$log"
  return "$rc"
}
export -f run_list
export bin trace out day
printf '%s\n' "${lists[@]}" | xargs -P "${FGD_JOBS:-$(nproc)}" -I{} bash -c 'run_list {}'
reports=()
for name in "${lists[@]}"; do reports+=("$name=$out/fgd-protocol-$name-$day.json"); done
machine="$(nproc) vCPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(uname -sr)"
python3 scripts/fgd_tables.py --published "$published" \
  --commit "$("$bin" --version)" --machine "$machine" "${reports[@]}" \
  > "$out/fgd-protocol-$day.md"
echo "wrote $out/fgd-protocol-$day.md"
