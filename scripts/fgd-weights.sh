#!/usr/bin/env bash
# How the weights of Paceline's `default` profile were chosen (docs/placement.md): a grid of
# policy weights (pack, gpu_fragmentation, gpu_stranding) run under the FGD paper's protocol
# on every task list of the Alibaba GPU trace with seeds 1..5 — not the seeds 42..51 that
# the comparison with FGD reports — and ranked by the mean unallocated GPU at 100 % arrived
# over the task lists. One set of weights for every task list.
# Usage: scripts/fgd-weights.sh BUILD_DIR TRACE_DIR > TABLE.md   (about 5 minutes on 2 cores)
set -euo pipefail
build=${1:-build/release}
trace=${2:-${PACELINE_ALIBABA_TRACE:-}}
bin=$build/paceline
[[ -x $bin ]] || { echo "no $bin: build first (make build)" >&2; exit 1; }
[[ -n $trace && -f $trace/openb_node_list_gpu_node.csv ]] || {
  echo "no Alibaba GPU trace: give its directory, or set PACELINE_ALIBABA_TRACE" >&2; exit 1; }
grid=("pack=1+gpu_fragmentation=4")  # the profile before the search, for reference
for pack in 0 1 2 4; do
  for strand in 8 16 32 64; do
    grid+=("pack=$pack+gpu_fragmentation=16+gpu_stranding=$strand")
  done
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lists=("$trace"/openb_pod_list_*.csv)
run() {  # list -> JSON report of every profile of the grid
  local name
  name=$(basename "$1" .csv)
  "$bin" sim --trace alibaba-gpu "$trace/openb_node_list_gpu_node.csv" "$1" --fill \
    --protocol fgd --seed 1 --repeat 5 --profiles "$(IFS=,; echo "${grid[*]}")" \
    --report "$tmp/${name#openb_pod_list_}.json" > /dev/null
}
pids=()
for list in "${lists[@]}"; do
  run "$list" &
  pids+=($!)
  # two at a time on a 2-core machine
  if ((${#pids[@]} >= $(nproc))); then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
wait
python3 - "$tmp" "$("$bin" --version)" "${grid[@]}" << 'PY'
import glob, json, os, sys
tmp, version, grid = sys.argv[1], sys.argv[2], sys.argv[3:]
reports = {os.path.basename(p)[:-5]: json.load(open(p)) for p in sorted(glob.glob(tmp + "/*.json"))}
names = list(reports)
rows = []
for g in grid:
    v = [reports[n]["profiles"][g]["final"]["unallocated_at_100_pct"]["mean"] for n in names]
    rows.append((sum(v) / len(v), g, v))
rows.sort()
print("Unallocated GPU %% at 100 %% arrived, FGD protocol, seeds 1..5 (`%s`).\n" % version)
print("| weights | " + " | ".join(names) + " | mean |")
print("|---|" + "---:|" * (len(names) + 1))
for mean, g, v in rows:
    print("| `%s` | %s | %.3f |" % (g, " | ".join("%.2f" % x for x in v), mean))
PY
