#!/usr/bin/env bash
# The FGD paper's experiment under its own protocol (docs/sim.md, "The FGD paper's protocol"):
# every task list of the Alibaba GPU trace, the paper's six policies and Paceline's `default`,
# seeds 42..51, arrivals to 130 % of the GPU capacity. Writes into bench/results/ (or
# $BENCH_OUT): one JSON report and two plots per task list, and fgd-protocol-DAY.md with the
# reproduction table against the paper's published figures and the comparison with FGD.
# Usage: scripts/bench-fgd.sh BUILD_DIR TRACE_DIR
#   TRACE_DIR holds openb_node_list_gpu_node.csv and openb_pod_list_*.csv
#   (cluster-trace-gpu-v2023); $PACELINE_ALIBABA_TRACE when not given. Skipped without it.
set -euo pipefail
build=${1:-build/release}
trace=${2:-${PACELINE_ALIBABA_TRACE:-}}
out=${BENCH_OUT:-bench/results}
day=$(date -u +%Y-%m-%d)
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
if [[ -z $trace || ! -f $trace/openb_node_list_gpu_node.csv ]]; then
  echo "skipped: no Alibaba GPU trace (give its directory, or set PACELINE_ALIBABA_TRACE)"
  exit 0
fi
mkdir -p "$out"
reports=()
for list in "$trace"/openb_pod_list_*.csv; do
  name=$(basename "$list" .csv)
  name=${name#openb_pod_list_}
  echo "-- $name"
  "$bin" sim --trace alibaba-gpu "$trace/openb_node_list_gpu_node.csv" "$list" --fill \
    --protocol fgd --seed 42 --repeat 10 --report "$out/fgd-protocol-$name-$day.json" \
    --plot "$out/fgd-protocol-$name-$day" | tail -9
  reports+=("$name=$out/fgd-protocol-$name-$day.json")
done
machine="$(nproc) vCPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(uname -sr)"
python3 scripts/fgd_tables.py --published bench/fgd-paper-published.csv \
  --commit "$("$bin" --version)" --machine "$machine" "${reports[@]}" \
  > "$out/fgd-protocol-$day.md"
echo "wrote $out/fgd-protocol-$day.md"
